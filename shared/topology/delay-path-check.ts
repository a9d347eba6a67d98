/**
 * The start-of-invocation check that the queues and exchanges the current config routes copies to
 * exist. Without it, a config changed after `topology apply` (another `MAX_RETRIES` or `BACKOFF_*`
 * names other tier queues) sends every retry copy back unroutable: the original is requeued, the
 * invocation stops with `publish-failed`, and the next one does the same, forever and quietly.
 */
import type { ChannelModel } from 'amqplib';
import { TopologyDriftError } from '../errors.js';
import { exists, lendChannels, plannedEntities } from './broker-ops.js';
import { buildTopologyPlan } from './plan.js';
import type { TopologyOptions } from './types.js';

/** What every drift message ends with: the one command that mends it. */
const DRIFT_REMEDY = 'run topology apply with the current config (npm run topology -- apply, or deploy the definitions again)';

/**
 * Passively checks (creates nothing) every exchange and queue the plan for `options` holds: the work
 * queue, the parking lot and the delay path. One round trip each, on one throwaway channel.
 * Throws `TopologyDriftError` naming what is missing.
 * @example
 * await checkDelayPath(broker.connection, topologyOptionsFromConfig(config));
 */
async function checkDelayPath(connection: ChannelModel, options: TopologyOptions): Promise<void> {
  const lender = lendChannels(connection);
  const missing: string[] = [];
  try {
    for (const entity of plannedEntities(buildTopologyPlan(options))) {
      if (!(await exists(lender, entity))) missing.push(`${entity.kind} ${entity.spec.name}`);
    }
  } finally {
    await lender.close();
  }
  if (missing.length === 0) return;
  throw new TopologyDriftError(
    `The broker lacks what the current config routes messages to (missing: ${missing.join(', ')}); no message was taken. Did MAX_RETRIES, BACKOFF_*, RETRY_RULES or DELAY_MODE change? ${DRIFT_REMEDY}`,
    { missing },
  );
}

export { checkDelayPath, DRIFT_REMEDY };
