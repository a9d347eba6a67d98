import type { Machine, Row } from './report.js';

/** What `npm run bench` writes (test/bench/run.ts), as far as the docs read it. */
type BenchReport = {
  readonly startedAt: string;
  readonly machine: Machine;
  readonly rows: readonly Row[];
  readonly options?: { readonly sections?: readonly string[] };
  /** Each section's last run, when the file keeps sections of several runs (test/bench/results-merge.ts). */
  readonly sectionRuns?: Readonly<Record<string, { readonly startedAt: string; readonly rabbitmq: string; readonly machine?: Machine }>>;
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
const FAULT_FIXED_FIELDS = new Set(['scenario', 'at', 'rabbitmq', 'machine', 'sent', 'missing', 'duplicates', 'repeatedEffects']);

/** What a table shows for a figure that a report written before it was counted lacks (`repeatedEffects`). */
const NOT_RECORDED = 'not recorded';

/** What the two columns count, for the headings (test/helpers/message-account.ts). */
const DUPLICATES_VS_REPEATS =
  '"duplicates" counts every extra outcome of a message: a second successful handler run, or a parked or still-queued copy besides its first outcome. ' +
  '"repeated effects" counts only the second (and later) successful handler runs: what a handler would have done twice.';

function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

function describeMachine(m: Machine): string {
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, Node ${m.node}`;
}

/** `2026-11-25 11:27 UTC` */
function runTime(startedAt: string): string {
  return `${startedAt.slice(0, 16).replace('T', ' ')} UTC`;
}

/** The machine a run recorded, or says that it was not (a section kept from a run before machines were kept per section). */
function describeRunMachine(machine: Machine | undefined): string {
  return machine === undefined ? 'machine not recorded' : describeMachine(machine);
}

/**
 * When `section` of `report` ran and on which machine: its own run's, when the file keeps sections
 * of several runs (a kept section's machine is known only when its run recorded it).
 */
function sectionRunOf(report: BenchReport, section: string): { readonly date: string; readonly machine: string } {
  const run = report.sectionRuns?.[section];
  if (run === undefined || run.startedAt === report.startedAt) return { date: report.startedAt.slice(0, 10), machine: describeMachine(report.machine) };
  return { date: run.startedAt.slice(0, 10), machine: describeRunMachine(run.machine) };
}

/** The heading's first line: one run, or the sections of each run the file keeps (with its broker and machine). */
function benchHeading(report: BenchReport): string {
  const runs = Object.entries(report.sectionRuns ?? {});
  const starts = [...new Set(runs.map(([, run]) => run.startedAt))].sort();
  if (starts.length <= 1) {
    const sections = report.options?.sections?.join(', ') ?? 'all';
    return `\`npm run bench\` of ${report.startedAt.slice(0, 10)} on **${report.machine.rabbitmq}**: ${describeMachine(report.machine)}; the broker local and shared with the client. Sections: ${sections}.`;
  }
  const byRun = starts.map((start) => {
    const of = runs.filter(([, run]) => run.startedAt === start);
    const first = of[0]?.[1];
    const machine = start === report.startedAt ? report.machine : first?.machine;
    return `${of.map(([section]) => section).join(', ')} (run of ${runTime(start)} on ${first?.rabbitmq}; ${describeRunMachine(machine)})`;
  });
  return `\`npm run bench\` on **${report.machine.rabbitmq}**, the broker local and shared with the client. Each section from its last run: ${byRun.join('; ')}.`;
}

/** The bench table of one broker version, headed by the broker, the date and the machine. */
function renderBench(report: BenchReport | undefined): string {
  if (report === undefined) return NO_BENCH_RESULTS;
  const lines = [
    benchHeading(report),
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
    `\`npm run test:faults\` (and \`test:cluster\`) on **${sorted[0]?.rabbitmq ?? 'an unknown broker'}**, runs of ${first === last ? first : `${first} to ${last}`}${machine ? `: ${describeMachine(machine)}` : ''}. "lost" is the scenario's count of messages sent but neither handled, parked nor still queued. ${DUPLICATES_VS_REPEATS}`,
    '',
    '| scenario | run | sent | lost | duplicates | repeated effects | other figures |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of sorted) {
    const others = Object.entries(r)
      .filter(([key]) => !FAULT_FIXED_FIELDS.has(key))
      .flatMap(([key, value]) => {
        const text = figure(value);
        return text === undefined ? [] : [`${key} ${text}`];
      });
    const column = (key: string) => figure(r[key]) ?? '-';
    lines.push(
      `| ${[r.scenario, r.at.slice(0, 16).replace('T', ' '), column('sent'), column('missing'), column('duplicates'), figure(r.repeatedEffects) ?? NOT_RECORDED, others.join('; ') || '-'].map(cell).join(' | ')} |`,
    );
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
 * Duplicates and repeated effects per fault with idempotency off and on, for each scenario that ran
 * both ways. The guard can only remove repeated effects; a crash still leaves extra copies, which
 * count as duplicates when they end parked or queued as well.
 */
function renderIdempotencyComparison(reports: readonly FaultReport[]): string | undefined {
  const byName = new Map(reports.map((r) => [r.scenario, r]));
  const pairs = reports
    .filter((r) => r.scenario.endsWith(IDEMPOTENT_SUFFIX))
    .flatMap((on) => {
      const off = byName.get(on.scenario.slice(0, -IDEMPOTENT_SUFFIX.length));
      return off === undefined ? [] : [{ off, on }];
    });
  if (pairs.length === 0) return undefined;
  const perFault = (r: FaultReport, key: string, missing: string): string =>
    typeof r[key] === 'number' ? ((r[key] as number) / faultsOf(r)).toFixed(2) : missing;
  const lines = [
    'Duplicates and repeated handler effects per fault, idempotency off and on (Redis store), each scenario run both ways in the same suite run:',
    '',
    '| fault | faults injected (off / on) | sent (off / on) | lost (off / on) | duplicates (off / on) | repeated effects (off / on) | duplicates per fault (off / on) | repeated effects per fault (off / on) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const { off, on } of pairs) {
    const both = (key: string, missing = '-') => `${figure(off[key]) ?? missing} / ${figure(on[key]) ?? missing}`;
    const bothPerFault = (key: string, missing = '-') => `${perFault(off, key, missing)} / ${perFault(on, key, missing)}`;
    lines.push(
      `| ${[off.scenario, `${faultsOf(off)} / ${faultsOf(on)}`, both('sent'), both('missing'), both('duplicates'), both('repeatedEffects', NOT_RECORDED), bothPerFault('duplicates'), bothPerFault('repeatedEffects', NOT_RECORDED)].map(cell).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

/** One broker's results, for the tables that set the brokers side by side. */
type BrokerFaults = { readonly rabbitmq: string; readonly reports: readonly FaultReport[] };
type BrokerBench = { readonly rabbitmq: string; readonly report: BenchReport };

/** `<scenario>` and `<scenario>-idempotent` of each broker, paired, in scenario order. */
function idempotencyPairs(reports: readonly FaultReport[]): { off: FaultReport; on: FaultReport }[] {
  const byName = new Map(reports.map((r) => [r.scenario, r]));
  return reports
    .filter((r) => r.scenario.endsWith(IDEMPOTENT_SUFFIX))
    .flatMap((on) => {
      const off = byName.get(on.scenario.slice(0, -IDEMPOTENT_SUFFIX.length));
      return off === undefined ? [] : [{ off, on }];
    })
    .sort((a, b) => a.off.scenario.localeCompare(b.off.scenario));
}

/**
 * Repeated effects and duplicates per fault, idempotency off / on, one column pair per broker: the
 * scenarios run both ways in each broker's recorded fault run.
 */
function renderIdempotencyFaultsAcross(brokers: readonly BrokerFaults[]): string {
  const withPairs = brokers.map((b) => ({ ...b, pairs: idempotencyPairs(b.reports) })).filter((b) => b.pairs.length > 0);
  if (withPairs.length === 0) return NO_FAULT_RESULTS;
  const scenarios = [...new Set(withPairs.flatMap((b) => b.pairs.map((p) => p.off.scenario)))].sort();
  const perFault = (r: FaultReport | undefined, key: string): string =>
    r === undefined ? '-' : typeof r[key] === 'number' ? ((r[key] as number) / faultsOf(r)).toFixed(2) : NOT_RECORDED;
  const dates = withPairs.flatMap((b) => b.pairs.flatMap((p) => [p.off.at.slice(0, 10), p.on.at.slice(0, 10)])).sort();
  const lines = [
    `Per fault injected (per kill, per cut, or per restart), idempotency off / on (Redis store), from the recorded fault runs of ${dates[0] === dates[dates.length - 1] ? dates[0] : `${dates[0]} to ${dates[dates.length - 1]}`}. ${DUPLICATES_VS_REPEATS}`,
    '',
    `| scenario | ${withPairs.map((b) => `repeated effects, ${b.rabbitmq}`).join(' | ')} | ${withPairs.map((b) => `duplicates, ${b.rabbitmq}`).join(' | ')} |`,
    `|---|${withPairs.map(() => '---|').join('')}${withPairs.map(() => '---|').join('')}`,
  ];
  for (const scenario of scenarios) {
    const pairOf = (b: (typeof withPairs)[number]) => b.pairs.find((p) => p.off.scenario === scenario);
    const cells = (key: string) =>
      withPairs.map((b) => {
        const p = pairOf(b);
        return `${perFault(p?.off, key)} / ${perFault(p?.on, key)}`;
      });
    lines.push(`| ${[scenario, ...cells('repeatedEffects'), ...cells('duplicates')].map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

/** The bench's idempotency rows (rate with idempotency on, as a share of off), one column per broker. */
function renderIdempotencyCostAcross(brokers: readonly BrokerBench[]): string {
  const store = (metric: string) => /idempotency on \((.+?)\),/.exec(metric)?.[1];
  // Boomerang with it on against off; the anchors' rows (a hand-written consumer with the store) have a table of their own.
  const rowsOf = (b: BrokerBench) => b.report.rows.filter((r) => r.section.startsWith('idempotency,') && store(r.metric) !== undefined);
  const withRows = brokers.filter((b) => rowsOf(b).length > 0);
  if (withRows.length === 0) return NO_BENCH_RESULTS;
  const keys = [...new Set(withRows.flatMap((b) => rowsOf(b).map((r) => `${r.section}|${store(r.metric)}`)))];
  const lines = [
    `Messages per second with idempotency on, as a share of the same path with it off in the same rounds (\`npm run bench\`, section idempotency, of ${withRows
      .map((b) => {
        const run = sectionRunOf(b.report, 'idempotency');
        return `${run.date} on ${b.rabbitmq} (${run.machine})`;
      })
      .join(' and ')}; the broker and the store on the same machine):`,
    '',
    `| path | store | ${withRows.map((b) => b.rabbitmq).join(' | ')} |`,
    `|---|---|${withRows.map(() => '---|').join('')}`,
  ];
  for (const key of keys) {
    const [section, storeName] = key.split('|') as [string, string];
    const ratios = withRows.map((b) => {
      const row = rowsOf(b).find((r) => r.section === section && store(r.metric) === storeName);
      return row === undefined ? '-' : `${row.ratio} (${row.boomerang.split(' (')[0]} msg/s against ${row.anchor.split(' (')[0]})`;
    });
    lines.push(`| ${[section.replace('idempotency, ', ''), storeName, ...ratios].map(cell).join(' | ')} |`);
  }
  return [lines.join('\n'), renderStoreCeiling(brokers)].filter((part) => part !== '').join('\n\n');
}

/**
 * The I/O contest's anchors: a hand-written consumer claiming and completing each id in the same store,
 * on against off (the ceiling the store leaves on this machine), and Boomerang on against it.
 */
function renderStoreCeiling(brokers: readonly BrokerBench[]): string {
  const ownCost = (metric: string) => /completing each id in (.+?) \(the store's own cost\)/.exec(metric)?.[1];
  const against = (metric: string) => /^msg\/s with idempotency on \((.+?)\) against the hand-written consumer/.exec(metric)?.[1];
  const rowsOf = (b: BrokerBench) => b.report.rows.filter((r) => r.section.startsWith('idempotency,'));
  const withRows = brokers.filter((b) => rowsOf(b).some((r) => ownCost(r.metric) !== undefined));
  if (withRows.length === 0) return '';
  const stores = [...new Set(withRows.flatMap((b) => rowsOf(b).flatMap((r) => ownCost(r.metric) ?? [])))];
  const figure = (b: BrokerBench, pick: (metric: string) => string | undefined, name: string): string => {
    const row = rowsOf(b).find((r) => pick(r.metric) === name);
    return row === undefined ? '-' : `${row.ratio} (${row.boomerang.split(' (')[0]} msg/s against ${row.anchor.split(' (')[0]})`;
  };
  const lines = [
    'The same I/O contest, with a hand-written consumer (prefetch and concurrency alike) that claims each id in the store before its handler and marks it completed after, as the anchor: what the store itself costs on this machine, and Boomerang against that consumer with the same store:',
    '',
    `| store | hand-written consumer, store against none | ${withRows.map((b) => `${b.rabbitmq}: Boomerang against it`).join(' | ')} |`,
    `|---|---|${withRows.map(() => '---|').join('')}`,
  ];
  for (const name of stores) {
    const ceiling = withRows.map((b) => `${b.rabbitmq}: ${figure(b, ownCost, name)}`).join('; ');
    lines.push(`| ${[name, ceiling, ...withRows.map((b) => figure(b, against, name))].map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

/** Where the bundling comparison (docs/deploy.md) stands until a bench has measured it. */
const NO_BUNDLING_RESULTS = 'Not measured by a bench run yet: run `npm run bench -- --section serverless`, then `npm run docs:figures`.';

/** The bench's bundling rows (the construct's bundle against NodejsFunction's), one column per broker. */
function renderBundlingAcross(brokers: readonly BrokerBench[]): string {
  const rowsOf = (b: BrokerBench) => b.report.rows.filter((r) => r.section === 'serverless cost, bundling');
  const withRows = brokers.filter((b) => rowsOf(b).length > 0);
  if (withRows.length === 0) return NO_BUNDLING_RESULTS;
  const key = (metric: string) => metric.replace(/ \(median of \d+\)/, '');
  const lines = [
    `The webhooks pull function bundled by BoomerangQueues against NodejsFunction, medians of fresh node processes (\`npm run bench\`, section serverless, of ${withRows
      .map((b) => {
        const run = sectionRunOf(b.report, 'serverless');
        return `${run.date} on ${b.rabbitmq} (${run.machine})`;
      })
      .join(' and ')}):`,
    '',
    `| BoomerangQueues against | ${withRows.map((b) => b.rabbitmq).join(' | ')} |`,
    `|---|${withRows.map(() => '---|').join('')}`,
  ];
  for (const metric of [...new Set(withRows.flatMap((b) => rowsOf(b).map((r) => key(r.metric))))]) {
    const cells = withRows.map((b) => {
      const row = rowsOf(b).find((r) => key(r.metric) === metric);
      return row === undefined ? '-' : `${row.boomerang.split(' (')[0]} against ${row.anchor.split(' (')[0]} (${row.ratio})`;
    });
    lines.push(`| ${[metric.replace(/^webhooks pull, /, '').replace(/: BoomerangQueues \([^)]*\) against /, ', ')].concat(cells).map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

export {
  cell,
  NO_BENCH_RESULTS,
  NO_BUNDLING_RESULTS,
  NO_FAULT_RESULTS,
  NOT_RECORDED,
  renderBench,
  renderBundlingAcross,
  renderFaults,
  renderIdempotencyCostAcross,
  renderIdempotencyFaultsAcross,
};
export type { BenchReport, BrokerBench, BrokerFaults, FaultReport };
