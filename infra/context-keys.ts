/**
 * The context keys the Boomerang app reads, so that a misspelt one (`workqueue`) fails the synth instead
 * of being ignored. Keys with a `:` or starting with `@` belong to CDK itself (feature flags,
 * `aws:cdk:*` settings the CLI passes, cached lookups) and are left alone.
 */
import { ConfigError } from '../shared/errors.js';

/** Every key the app reads, in the order the README's context table lists them. */
const CONTEXT_KEYS = [
  'stackName',
  'logRetentionDays',
  'alarmTopicArn',
  'createBroker',
  'brokerInstanceType',
  'brokerEngineVersion',
  'subnetIds',
  'securityGroupIds',
  'functionEnvironment',
] as const;

/** Keys of the one-queue stack: each queue now says these in its functions/<name>.ts. */
const MOVED_KEYS: Readonly<Record<string, string>> = {
  workQueue: 'workQueue in defineQueue',
  parkingQueue: 'parkingQueue in defineQueue',
  virtualHost: 'deploy.virtualHost in defineQueue',
  modes: 'deploy.modes in defineQueue',
  acknowledgeCompetingModes: 'deploy.acknowledgeCompetingModes in defineQueue',
  pullRateMinutes: 'deploy.pull.rateMinutes in defineQueue',
  pullReservedConcurrency: 'deploy.pull.reservedConcurrency in defineQueue',
  pullTimeoutSeconds: 'deploy.pull.timeoutSeconds in defineQueue',
  pullMemoryMb: 'deploy.pull.memoryMb in defineQueue',
  eventTimeoutSeconds: 'deploy.event.timeoutSeconds in defineQueue',
  eventMemoryMb: 'deploy.event.memoryMb in defineQueue',
  eventBatchSize: 'deploy.event.batchSize in defineQueue',
  eventBatchWindowSeconds: 'deploy.event.batchWindowSeconds in defineQueue',
};

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
  // Also a moved key misspelt: `workqueue` is still someone's workQueue.
  const movedKey = Object.keys(MOVED_KEYS).find((key) => key.toLowerCase() === unknown.toLowerCase());
  if (movedKey !== undefined) {
    throw new ConfigError(
      `The context key ${JSON.stringify(unknown)} is gone: the stack deploys every queue declared in functions/, and each queue sets this as ${MOVED_KEYS[movedKey]} in its functions/<name>.ts. Remove -c ${unknown}`,
    );
  }
  const near = CONTEXT_KEYS.find((key) => key.toLowerCase() === unknown.toLowerCase());
  const hint = near === undefined ? '' : ` (did you mean ${near}? keys are case-sensitive)`;
  throw new ConfigError(`Unknown context key ${JSON.stringify(unknown)}${hint}; the known keys are ${CONTEXT_KEYS.join(', ')}`);
}

export { checkContextKeys, CONTEXT_KEYS, MOVED_KEYS };
export type { ContextKey };
