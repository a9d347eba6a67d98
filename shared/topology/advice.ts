/**
 * What the topology CLI prints after the report table: where messages can be dropped (with the policy
 * command Boomerang offers but cannot run over AMQP), what to do about each entity that differs, and
 * what `apply` can do (create what is missing) and cannot (change an existing entity's arguments).
 */
import { describeDifferences } from './mismatch.js';
import { policyCommand } from './policy-fix.js';
import type { TopologyWarning } from './types.js';
import type { ReportItem } from './report.js';

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

export { formatVerifyAdvice, formatWarnings };
