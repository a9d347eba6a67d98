import type { Machine, Row } from './report.js';

/** What `npm run bench` writes (test/bench/run.ts), as far as the docs read it. */
type BenchReport = {
  readonly startedAt: string;
  readonly machine: Machine;
  readonly rows: readonly Row[];
  readonly options?: { readonly sections?: readonly string[] };
};

/** What a fault scenario writes (test/helpers/fault-report.ts): a few fixed fields, then its own figures. */
type FaultReport = {
  readonly scenario: string;
  readonly at: string;
  readonly rabbitmq?: string;
  readonly machine?: Machine;
  readonly [figure: string]: unknown;
};

const NO_BENCH_RESULTS = 'No results yet: run `npm run bench`, then `npm run docs:figures`.';
const NO_FAULT_RESULTS = 'No results yet: run `npm run test:faults`, then `npm run docs:figures`.';

/** Fields every fault report has, shown in their own columns or the block's heading. */
const FAULT_FIXED_FIELDS = new Set(['scenario', 'at', 'rabbitmq', 'machine', 'sent', 'missing', 'duplicates']);

function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

function describeMachine(m: Machine): string {
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, Node ${m.node}`;
}

/** The bench table of one broker version, headed by the broker, the date and the machine. */
function renderBench(report: BenchReport | undefined): string {
  if (report === undefined) return NO_BENCH_RESULTS;
  const sections = report.options?.sections?.join(', ') ?? 'all';
  const lines = [
    `\`npm run bench\` of ${report.startedAt.slice(0, 10)} on **${report.machine.rabbitmq}**: ${describeMachine(report.machine)}; the broker local and shared with the client. Sections: ${sections}.`,
    '',
    '| section | what | Boomerang | anchor (same run) | ratio | target | verdict |',
    '|---|---|---|---|---|---|---|',
    ...report.rows.map((r) => `| ${[r.section, r.metric, r.boomerang, r.anchor, r.ratio, r.target, r.verdict].map(cell).join(' | ')} |`),
  ];
  return lines.join('\n');
}

function figure(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(2);
  if (typeof value === 'string') return value.length > 120 ? `${value.slice(0, 117)}...` : value;
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'number' || typeof v === 'string')) return `[${value.map(figure).join(', ')}]`;
  // Nested objects (whole summaries, per-message reasons) stay in the JSON file.
  return undefined;
}

/** The fault table of one broker version: one row per scenario, lost and duplicates in their own columns. */
function renderFaults(reports: readonly FaultReport[]): string {
  if (reports.length === 0) return NO_FAULT_RESULTS;
  const sorted = [...reports].sort((a, b) => a.scenario.localeCompare(b.scenario));
  const dates = sorted.map((r) => r.at.slice(0, 10)).sort();
  const first = dates[0] as string;
  const last = dates[dates.length - 1] as string;
  const machine = sorted.find((r) => r.machine !== undefined)?.machine;
  const lines = [
    `\`npm run test:faults\` (and \`test:cluster\`) on **${sorted[0]?.rabbitmq ?? 'an unknown broker'}**, runs of ${first === last ? first : `${first} to ${last}`}${machine ? `: ${describeMachine(machine)}` : ''}. "lost" is the scenario's count of messages sent but neither handled, parked nor still queued.`,
    '',
    '| scenario | run | sent | lost | duplicates | other figures |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of sorted) {
    const others = Object.entries(r)
      .filter(([key]) => !FAULT_FIXED_FIELDS.has(key))
      .flatMap(([key, value]) => {
        const text = figure(value);
        return text === undefined ? [] : [`${key} ${text}`];
      });
    const column = (key: string) => figure(r[key]) ?? '-';
    lines.push(`| ${[r.scenario, r.at.slice(0, 16).replace('T', ' '), column('sent'), column('missing'), column('duplicates'), others.join('; ') || '-'].map(cell).join(' | ')} |`);
  }
  const comparison = renderIdempotencyComparison(sorted);
  return comparison === undefined ? lines.join('\n') : [...lines, '', comparison].join('\n');
}

/** A scenario run again with idempotency on reports as `<scenario>-idempotent`. */
const IDEMPOTENT_SUFFIX = '-idempotent';

/** How many faults a scenario injected: its kills or cuts, else one (a broker restart). */
function faultsOf(r: FaultReport): number {
  const count = typeof r.kills === 'number' ? r.kills : typeof r.cuts === 'number' ? r.cuts : 1;
  return Math.max(1, count);
}

/**
 * Duplicates per fault with idempotency off and on, for each scenario that ran both ways: the
 * duplicates are handler runs that repeated an effect (the record file's second successes).
 */
function renderIdempotencyComparison(reports: readonly FaultReport[]): string | undefined {
  const byName = new Map(reports.map((r) => [r.scenario, r]));
  const pairs = reports.filter((r) => r.scenario.endsWith(IDEMPOTENT_SUFFIX)).flatMap((on) => {
    const off = byName.get(on.scenario.slice(0, -IDEMPOTENT_SUFFIX.length));
    return off === undefined ? [] : [{ off, on }];
  });
  if (pairs.length === 0) return undefined;
  const perFault = (r: FaultReport): string => (typeof r.duplicates === 'number' ? (r.duplicates / faultsOf(r)).toFixed(2) : '-');
  const lines = [
    'Duplicate handler effects per fault, idempotency off and on (Redis store), each scenario run both ways in the same suite run:',
    '',
    '| fault | faults injected (off / on) | sent (off / on) | lost (off / on) | duplicates (off / on) | duplicates per fault (off / on) |',
    '|---|---|---|---|---|---|',
  ];
  for (const { off, on } of pairs) {
    const both = (key: string) => `${figure(off[key]) ?? '-'} / ${figure(on[key]) ?? '-'}`;
    lines.push(`| ${[off.scenario, `${faultsOf(off)} / ${faultsOf(on)}`, both('sent'), both('missing'), both('duplicates'), `${perFault(off)} / ${perFault(on)}`].map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

export { NO_BENCH_RESULTS, NO_FAULT_RESULTS, renderBench, renderFaults };
export type { BenchReport, FaultReport };
