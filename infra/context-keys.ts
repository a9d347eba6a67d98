/**
 * The context keys the Boomerang app reads, so that a misspelt one (`workqueue`) fails the synth instead
 * of being ignored. Keys with a `:` or starting with `@` belong to CDK itself (feature flags,
 * `aws:cdk:*` settings the CLI passes, cached lookups) and are left alone.
 */
import { ConfigError } from '../shared/errors.js';

/** Every key the app reads, in the order the README's context table lists them. */
const CONTEXT_KEYS = [
  'stackName',
  'workQueue',
  'parkingQueue',
  'virtualHost',
  'modes',
  'acknowledgeCompetingModes',
  'pullRateMinutes',
  'pullReservedConcurrency',
  'pullTimeoutSeconds',
  'pullMemoryMb',
  'eventTimeoutSeconds',
  'eventMemoryMb',
  'eventBatchSize',
  'eventBatchWindowSeconds',
  'logRetentionDays',
  'alarmTopicArn',
  'createBroker',
  'brokerInstanceType',
  'brokerEngineVersion',
  'subnetIds',
  'securityGroupIds',
  'functionEnvironment',
] as const;

type ContextKey = (typeof CONTEXT_KEYS)[number];

function isCdkKey(key: string): boolean {
  return key.includes(':') || key.startsWith('@');
}

/**
 * Throws `ConfigError` naming the first key that is neither Boomerang's nor CDK's, with the known ones.
 * @example checkContextKeys(app.node.getAllContext());
 */
function checkContextKeys(context: Readonly<Record<string, unknown>>): void {
  const unknown = Object.keys(context).find((key) => !isCdkKey(key) && !(CONTEXT_KEYS as readonly string[]).includes(key));
  if (unknown === undefined) return;
  const near = CONTEXT_KEYS.find((key) => key.toLowerCase() === unknown.toLowerCase());
  const hint = near === undefined ? '' : ` (did you mean ${near}? keys are case-sensitive)`;
  throw new ConfigError(`Unknown context key ${JSON.stringify(unknown)}${hint}; the known keys are ${CONTEXT_KEYS.join(', ')}`);
}

export { checkContextKeys, CONTEXT_KEYS };
export type { ContextKey };
