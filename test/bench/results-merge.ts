/**
 * A bench run of some sections only (`--section native`) must not wipe the other sections recorded for
 * the same broker version: the per-broker file keeps each section's last run, with its own date and
 * broker version (`sectionRuns`), and the docs' table says which section ran when.
 *
 * @example
 * const kept = mergeBenchReports(JSON.parse(readFileSync(file, 'utf8')), report);
 */
import type { Row } from './report.js';

/** When a section last ran, on which broker, and (runs since 2026-11-27) on which machine. */
type SectionRun = { readonly startedAt: string; readonly rabbitmq: string; readonly machine?: Readonly<Record<string, unknown>> };

/** What run.ts writes, as far as the merge reads it. */
type BenchFile = {
  readonly startedAt: string;
  readonly machine: { readonly rabbitmq: string } & Record<string, unknown>;
  readonly options: { readonly sections: readonly string[] } & Record<string, unknown>;
  readonly durationsMs: Readonly<Record<string, number>>;
  readonly rows: readonly Row[];
  readonly results: Readonly<Record<string, unknown>>;
  readonly sectionRuns?: Readonly<Record<string, SectionRun>>;
};

/** Rows written before they carried `benchSection`: their section label names it. */
const LEGACY_LABELS: readonly (readonly [string, string])[] = [
  ['success path', 'success'],
  ['retry path', 'retry'],
  ['idempotency', 'idempotency'],
  ['delay accuracy', 'delay'],
  ['serverless cost', 'serverless'],
  ['memory', 'memory'],
  ['native', 'native'],
];

/** The bench section a row came from. */
function benchSectionOf(row: Row): string | undefined {
  return row.benchSection ?? LEGACY_LABELS.find(([label]) => row.section.startsWith(label))?.[1];
}

/** Each section's last run: the sections of `current`, and the other sections of `previous` as they were. */
function mergeBenchReports(previous: BenchFile | undefined, current: BenchFile, order: readonly string[]): BenchFile {
  const ran = new Set(current.options.sections);
  // The sections run now carry this run's machine; a kept one keeps what it was recorded with.
  const runOf = (report: BenchFile, section: string): SectionRun =>
    report === current
      ? { startedAt: report.startedAt, rabbitmq: report.machine.rabbitmq, machine: report.machine }
      : (report.sectionRuns?.[section] ?? { startedAt: report.startedAt, rabbitmq: report.machine.rabbitmq });
  const kept = previous === undefined || previous.machine.rabbitmq !== current.machine.rabbitmq ? [] : previous.options.sections.filter((s) => !ran.has(s));
  const sections = order.filter((s) => ran.has(s) || kept.includes(s));
  const from = (section: string): BenchFile => (ran.has(section) ? current : (previous as BenchFile));
  const pick = <T>(field: (r: BenchFile) => Readonly<Record<string, T>>): Record<string, T> =>
    Object.fromEntries(sections.flatMap((s) => (s in field(from(s)) ? [[s, field(from(s))[s] as T]] : [])));
  return {
    ...current,
    options: { ...current.options, sections },
    durationsMs: pick((r) => r.durationsMs),
    rows: sections.flatMap((s) => from(s).rows.filter((row) => benchSectionOf(row) === s)),
    results: pick((r) => r.results),
    sectionRuns: Object.fromEntries(sections.map((s) => [s, runOf(from(s), s)])),
  };
}

export { benchSectionOf, mergeBenchReports };
export type { BenchFile, SectionRun };
