/**
 * What the topology custom resource does for each CloudFormation request, as an outcome to answer
 * with: Create and Update apply the queue's plan with `applyTopology` (the code of `boomerang topology
 * apply`); Delete deletes nothing and says what stays. The caller (topology-resource.ts) answers.
 */
import type { ChannelModel } from 'amqplib';
import { connectFromConfig } from '../amqp/connect-from-config.js';
import { type Config, topologyOptionsFromConfig } from '../config/config.js';
import { isNamedError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { formatReport, formatWarnings } from './report.js';
import { applyTopology } from './apply.js';
import { brokerVersionOf, inspect, lendChannels } from './broker-ops.js';
import type { CustomResourceEvent, CustomResourceOutcome } from './cfn-response.js';
import type { TopologyMismatchError } from './mismatch.js';
import { buildTopologyPlan } from './plan.js';
import { isPlanEntity, noLongerNeeded, parseEntity, type PlanEntity, planSummary } from './plan-summary.js';
import { appliedReason, keptReason, mismatchReason } from './resource-reason.js';

/** The resource's properties, as the construct writes them (topology-resource.ts in shared/cdk/). */
type TopologyResourceProperties = {
  /** The declared queue's name (`functions/<name>.ts`). */
  readonly Queue: string;
  readonly WorkQueue: string;
  readonly VirtualHost: string;
  /** The plan's entities at synth, `queue <name>` / `exchange <name>` (plan-summary.ts). */
  readonly Entities: readonly string[];
  /** The plan's digest at synth: a changed plan changes it, so CloudFormation sends an Update. */
  readonly PlanDigest: string;
};

type TopologyEvent = CustomResourceEvent<TopologyResourceProperties>;

/** What the work needs: the queue's config, a way to connect, where the report goes. */
type WorkContext = {
  readonly config: () => Config;
  readonly connect: (config: Config) => Promise<{ readonly connection: ChannelModel; close(): Promise<void> }>;
  readonly log: Logger;
};

/** Stable per work queue and vhost, so that an Update never makes CloudFormation replace (and Delete) the resource. */
function physicalIdOf(event: TopologyEvent): string {
  const { WorkQueue, VirtualHost } = event.ResourceProperties;
  return event.RequestType === 'Delete' && event.PhysicalResourceId !== undefined ? event.PhysicalResourceId : `${WorkQueue}@${VirtualHost}`;
}

/** The real connection, as the functions make it (`AMQP_URL`, or `AMQP_SECRET_ID` read from Secrets Manager). */
function connectFor(log: Logger): WorkContext['connect'] {
  return (config) => connectFromConfig(config, { connectionName: 'boomerang-topology-resource', log });
}

/** Create and Update: applies the plan; a mismatch fails with every difference, nothing changed. */
async function applyRequest(event: TopologyEvent, ctx: WorkContext): Promise<CustomResourceOutcome> {
  const physicalResourceId = physicalIdOf(event);
  const queue = event.ResourceProperties.Queue;
  const config = ctx.config();
  const options = topologyOptionsFromConfig(config);
  const summary = planSummary(buildTopologyPlan(options));
  const previous = event.OldResourceProperties;
  // A rollback's Update brings the old properties while this function still runs the new code and its
  // plan (CloudFormation rolls the function back after this resource). Applying would fight the old plan.
  if (event.RequestType === 'Update' && previous?.PlanDigest === summary.digest && event.ResourceProperties.PlanDigest !== summary.digest) {
    const reason = `Rollback of ${queue}: nothing applied, nothing deleted. The properties name the plan before the update; this function still runs the plan being rolled back, and returns to the old one next. Run \`boomerang topology verify --function ${queue}\` after the rollback.`;
    return { status: 'SUCCESS', reason, physicalResourceId };
  }
  if (event.ResourceProperties.PlanDigest !== summary.digest) {
    ctx.log.warn('the plan differs from the one the stack was synthesized with; applying the plan of this function', {
      synthDigest: event.ResourceProperties.PlanDigest,
      digest: summary.digest,
    });
  }
  const broker = await ctx.connect(config);
  try {
    const brokerVersion = brokerVersionOf(broker.connection);
    const plan = buildTopologyPlan({ ...options, brokerVersion });
    const vhost = event.ResourceProperties.VirtualHost;
    try {
      const report = await applyTopology(broker.connection, plan);
      const dropped = event.RequestType === 'Update' ? noLongerNeeded(previous?.Entities ?? [], summary.entities) : [];
      ctx.log.info(`topology applied for ${config.workQueue}\n${formatReport(report)}\n${formatWarnings(report.warnings, vhost).join('\n')}`, {
        noLongerNeeded: dropped,
      });
      return {
        status: 'SUCCESS',
        reason: appliedReason(queue, report, brokerVersion, dropped),
        physicalResourceId,
        data: { WorkQueue: config.workQueue, ParkingQueue: config.parkingQueue, NoLongerNeeded: dropped.map((e) => parseEntity(e).name).join(',') },
      };
    } catch (error) {
      if (!isNamedError<TopologyMismatchError>(error, 'TopologyMismatchError')) throw error;
      ctx.log.error(`${error.name}: ${error.message}\n${formatWarnings(error.warnings, vhost).join('\n')}`);
      return { status: 'FAILED', reason: mismatchReason(queue, error.differences, error.messageCounts), physicalResourceId };
    }
  } finally {
    await broker.close();
  }
}

/** Delete: SUCCESS whatever happens, deleting nothing; counts what stays when the broker answers. */
async function deleteRequest(event: TopologyEvent, ctx: WorkContext): Promise<CustomResourceOutcome> {
  const physicalResourceId = physicalIdOf(event);
  const queue = event.ResourceProperties.Queue;
  const entities = (event.ResourceProperties.Entities ?? []).filter(isPlanEntity) as PlanEntity[];
  const kept: { entity: PlanEntity; messageCount?: number }[] = [];
  try {
    const broker = await ctx.connect(ctx.config());
    const lender = lendChannels(broker.connection);
    try {
      for (const entity of entities) {
        const { kind, name } = parseEntity(entity);
        const count = await inspect(lender, { kind, spec: { name } });
        if (count !== undefined) kept.push({ entity, messageCount: kind === 'queue' ? count : undefined });
      }
    } finally {
      await lender.close();
      await broker.close();
    }
  } catch (error) {
    const failure = `${(error as Error).name}: ${(error as Error).message}`;
    ctx.log.warn('delete: the broker was not read; nothing was deleted either way', { reason: failure });
    return {
      status: 'SUCCESS',
      reason: keptReason(
        queue,
        entities.map((entity) => ({ entity })),
        failure,
      ),
      physicalResourceId,
    };
  }
  ctx.log.info('delete: nothing deleted', { kept });
  return { status: 'SUCCESS', reason: keptReason(queue, kept), physicalResourceId };
}

export { applyRequest, connectFor, deleteRequest, physicalIdOf };
export type { TopologyEvent, TopologyResourceProperties, WorkContext };
