import { readFileSync } from 'node:fs';
import os from 'node:os';

/** One line of the results table: a figure next to the anchor measured in the same run. */
type Row = {
  readonly section: string;
  readonly metric: string;
  readonly boomerang: string;
  readonly anchor: string;
  /** Boomerang / anchor, as the target reads it. */
  readonly ratio: string;
  readonly target: string;
  readonly verdict: 'meets' | 'misses' | 'info' | 'not measured';
  /** The `npm run bench` section that wrote it (run.ts sets it), so a partial run can replace its own rows. */
  readonly benchSection?: string;
};

type Machine = { readonly cpu: string; readonly cores: number; readonly memoryGiB: number; readonly node: string; readonly rabbitmq: string };

/** What the figures came from: CPU model and count (/proc/cpuinfo), RAM, Node and broker versions. */
function machineInfo(rabbitmq: string): Machine {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu;
  } catch {
    // Not Linux: keep what Node reports.
  }
  return { cpu, cores: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, rabbitmq };
}

function markdownTable(rows: readonly Row[]): string {
  const head = ['section', 'metric', 'Boomerang', 'anchor (same run)', 'ratio', 'target', 'verdict'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) lines.push(`| ${[r.section, r.metric, r.boomerang, r.anchor, r.ratio, r.target, r.verdict].join(' | ')} |`);
  return lines.join('\n');
}

/** `12 345`-style thousands for rates and counts. */
function fmt(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }).replace(/,/g, ' ');
}

function pct(ratio: number): string {
  return `${(ratio * 100).toFixed(0)} %`;
}

export { fmt, machineInfo, markdownTable, pct };
export type { Machine, Row };
