/**
 * A ceiling on the delay queues one configuration may plan. Every queue costs the broker memory and,
 * for quorum queues, a Raft group on each node; a policy whose multiplier is barely above 1, or many
 * rules, would otherwise plan hundreds of them silently.
 */
import { ConfigError } from '../errors.js';
import { exactLevelCount } from './exact-names.js';
import type { TopologyOptions } from './types.js';

/** The most delay queues one configuration may plan (the defaults plan 13 in tiers mode, 13 in exact mode). */
const MAX_DELAY_QUEUES = 100;

/** The delay queues `options` plan: one per tier, or the exact levels plus the unroutable keeper. */
function plannedDelayQueueCount(options: TopologyOptions): number {
  if (options.delayMode === 'native') return 0;
  return options.delayMode === 'tiers' ? options.tierDelaysMs.length : exactLevelCount(options) + 1;
}

/** Throws a `ConfigError` saying how many queues would be planned and which settings lower it. */
function assertDelayQueueBudget(options: TopologyOptions): void {
  const count = plannedDelayQueueCount(options);
  if (count <= MAX_DELAY_QUEUES) return;
  const remedy =
    options.delayMode === 'tiers'
      ? 'lower MAX_RETRIES or the maxRetries of RETRY_RULES, raise BACKOFF_MULTIPLIER, or use DELAY_MODE=exact'
      : 'raise DELAY_RESOLUTION_MS or lower BACKOFF_MAX_MS';
  throw new ConfigError(`The retry policy would plan ${count} delay queues for '${options.workQueue}', over the limit of ${MAX_DELAY_QUEUES}: ${remedy}`);
}

export { assertDelayQueueBudget, plannedDelayQueueCount };
