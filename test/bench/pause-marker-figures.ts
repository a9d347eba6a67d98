/**
 * The pause marker's cost table (docs/handlers.md, "What it costs"), from the files
 * test/bench/pause-marker-cost.ts writes: bench-results/pause-marker-cost-rabbitmq-<version>.json,
 * one column per broker, a row per variant of each section.
 */

import { cell } from './figures-render.js';

/** What test/bench/pause-marker-cost.ts writes. */
type PauseMarkerCost = {
  readonly broker: string;
  readonly rounds: number;
  readonly recordedAt: string;
  /** Section title, then variant, then the median in ms. */
  readonly results: Readonly<Record<string, Readonly<Record<string, number>>>>;
};

const NO_PAUSE_MARKER_RESULTS =
  '_No results yet: run `npx tsx test/bench/pause-marker-cost.ts` on each broker (`NATIVE=1` on 4.3), then `npm run docs:figures`._';

/**
 * The table of every broker's latest results, oldest broker first; a variant a broker did not run
 * (native on 3.10) shows `-`.
 * @example renderPauseMarkerCost([{ broker: 'RabbitMQ 3.10.8', rounds: 150, recordedAt: '2026-11-27T20:00:00Z', results: { 'write': { 'once': 2.5 } } }])
 */
function renderPauseMarkerCost(reports: readonly PauseMarkerCost[]): string {
  if (reports.length === 0) return NO_PAUSE_MARKER_RESULTS;
  const rows: Array<[string, string]> = [];
  for (const report of reports) {
    for (const [section, variants] of Object.entries(report.results)) {
      for (const variant of Object.keys(variants)) if (!rows.some(([s, v]) => s === section && v === variant)) rows.push([section, variant]);
    }
  }
  const lines = [
    `Medians in ms (${reports.map((r) => `${r.rounds} rounds on ${r.broker}, ${r.recordedAt.slice(0, 10)}`).join('; ')}):`,
    '',
    `| section | variant | ${reports.map((r) => r.broker).join(' | ')} |`,
    `|---|---|${reports.map(() => '---|').join('')}`,
  ];
  for (const [section, variant] of rows) {
    const cells = reports.map((r) => {
      const value = r.results[section]?.[variant];
      return value === undefined ? '-' : `${value.toFixed(2)} ms`;
    });
    lines.push(`| ${[section, variant, ...cells].map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

export { NO_PAUSE_MARKER_RESULTS, renderPauseMarkerCost };
export type { PauseMarkerCost };
