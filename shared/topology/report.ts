/**
 * What `applyTopology` and `verifyTopology` report, one item per exchange, queue and binding, and how
 * the topology CLI prints it: the table, then the advice after it (where messages can be dropped,
 * with the policy command Boomerang offers but cannot run over AMQP; what to do about each entity
 * that differs; what `apply` can do, create what is missing, and cannot, change an existing entity's arguments).
 */
import type { ArgumentDifference, TopologyWarning } from './types.js';
import { describeDifferences } from './mismatch.js';
import { policyCommand } from './policy-fix.js';

type EntityKind = 'exchange' | 'queue' | 'binding';

/**
 * `created`: it was missing and is now declared. `unchanged`: it existed with the planned arguments.
 * `exists`: the work queue existed and was left alone (its arguments belong to its team).
 * `bound`: the binding is in place (binding is idempotent, so new and old look the same).
 * `mismatch`: it exists with other arguments; see `argument`, `expected`, `actual`.
 */
type ApplyStatus = 'created' | 'unchanged' | 'exists' | 'bound' | 'mismatch';

/**
 * `ok`: exists as planned (the work queue: exists). `missing`: not on the broker.
 * `different`: exists with other arguments. `not-checked`: AMQP 0.9.1 cannot read it (bindings).
 */
type VerifyStatus = 'ok' | 'missing' | 'different' | 'not-checked';

type ReportItem<Status extends string> = {
  readonly kind: EntityKind;
  readonly name: string;
  readonly status: Status;
  /** The first differing argument; `differences` has them all. */
  readonly argument?: string;
  /** The planned value; absent when the plan does not set the argument. */
  readonly expected?: string;
  /** The broker's value; absent when the entity does not set the argument. */
  readonly actual?: string;
  /** Every differing argument, with both values. */
  readonly differences?: readonly ArgumentDifference[];
  /** A queue's message count when it was checked: what deleting it would lose. */
  readonly messageCount?: number;
  readonly detail?: string;
};

type ApplyReport = {
  readonly items: readonly ReportItem<ApplyStatus>[];
  /** Where messages can be dropped and apply cannot change it; printed, never failing the run. */
  readonly warnings: readonly TopologyWarning[];
};

type VerifyReport = {
  /** No item is `missing` or `different` (`not-checked` items and warnings do not count against it). */
  readonly ok: boolean;
  readonly items: readonly ReportItem<VerifyStatus>[];
  readonly warnings: readonly TopologyWarning[];
};

/** The item for an exchange or queue, carrying the differences when there are some. */
function entityItem<Status extends string>(
  kind: EntityKind,
  name: string,
  status: Status,
  differences: readonly ArgumentDifference[] = [],
): ReportItem<Status> {
  const [first] = differences;
  if (!first) return { kind, name, status };
  const { argument, expected, actual } = first;
  return { kind, name, status, argument, expected, actual, differences };
}

function describeItem(item: ReportItem<string>): string | undefined {
  const shown = (value: string | undefined): string => (value === undefined ? '(not set)' : value === '' ? "''" : value);
  const differences = item.differences ?? (item.argument ? [{ argument: item.argument, expected: item.expected, actual: item.actual }] : []);
  if (differences.length === 0) return item.detail;
  return differences.map((d) => `${d.argument}: expected ${shown(d.expected)}, found ${shown(d.actual)}`).join('; ');
}

/**
 * One aligned line per item, for the CLI.
 * @example formatReport(report) // 'unchanged  queue     orders.delay.1000ms\n...'
 */
function formatReport(report: { readonly items: readonly ReportItem<string>[] }): string {
  const statusWidth = Math.max(0, ...report.items.map((item) => item.status.length));
  const kindWidth = Math.max(0, ...report.items.map((item) => item.kind.length));
  const nameWidth = Math.max(0, ...report.items.map((item) => item.name.length));
  return report.items
    .map((item) => {
      const columns = [item.status.padEnd(statusWidth), item.kind.padEnd(kindWidth), item.name.padEnd(nameWidth)];
      const detail = describeItem(item);
      return (detail ? [...columns, detail] : columns).join('  ').trimEnd();
    })
    .join('\n');
}

/** One paragraph per warning, each followed by its fix command when there is one. */
function formatWarnings(warnings: readonly TopologyWarning[], vhost: string): string[] {
  return warnings.map((w) => `WARNING: ${w.message}${w.fix ? `\n  ${policyCommand(w.fix, vhost)}` : ''}`);
}

/**
 * The advice after `verify`'s table: warnings, then a paragraph per different entity, then what apply
 * would create.
 * @example process.stdout.write(`${formatVerifyAdvice(report, '/').join('\n')}\n`);
 */
function formatVerifyAdvice(report: { readonly items: readonly ReportItem<string>[]; readonly warnings: readonly TopologyWarning[] }, vhost: string): string[] {
  const different = report.items.filter((item) => item.status === 'different' && item.differences !== undefined);
  const missing = report.items.filter((item) => item.status === 'missing');
  return [
    ...formatWarnings(report.warnings, vhost),
    ...different.map((item) => describeDifferences(item.differences ?? [], item.messageCount)),
    ...(missing.length > 0 ? [`${missing.length} missing: \`boomerang topology apply\` creates ${missing.length === 1 ? 'it' : 'them'}.`] : []),
  ];
}

export { entityItem, formatReport, formatVerifyAdvice, formatWarnings };
export type { ApplyReport, ApplyStatus, ReportItem, VerifyReport, VerifyStatus };
