/** What `applyTopology` and `verifyTopology` report, one item per exchange, queue and binding. */
import type { ArgumentDifference } from './mismatch.js';

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
  /** The first differing argument (the broker names only one per entity). */
  readonly argument?: string;
  /** The planned value; absent when the plan does not set the argument. */
  readonly expected?: string;
  /** The broker's value; absent when the entity does not set the argument. */
  readonly actual?: string;
  readonly detail?: string;
};

type ApplyReport = { readonly items: readonly ReportItem<ApplyStatus>[] };

type VerifyReport = {
  /** No item is `missing` or `different` (`not-checked` items do not count against it). */
  readonly ok: boolean;
  readonly items: readonly ReportItem<VerifyStatus>[];
};

/** The item for an exchange or queue, carrying the difference when there is one. */
function entityItem<Status extends string>(
  kind: EntityKind,
  name: string,
  status: Status,
  difference?: ArgumentDifference,
): ReportItem<Status> {
  if (!difference) return { kind, name, status };
  const { argument, expected, actual } = difference;
  return { kind, name, status, argument, expected, actual };
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
      const detail = item.argument
        ? `${item.argument}: expected ${item.expected ?? '(not set)'}, found ${item.actual ?? '(not set)'}`
        : item.detail;
      return (detail ? [...columns, detail] : columns).join('  ').trimEnd();
    })
    .join('\n');
}

export { entityItem, formatReport };
export type { ApplyReport, ApplyStatus, EntityKind, ReportItem, VerifyReport, VerifyStatus };
