/**
 * A queue's topology in the stack: a custom resource (`Custom::BoomerangTopology`) whose function, one
 * per queue like the retention function, runs the queue's own bundle with the environment of its other
 * functions (vhost, broker secret, functionEnvironment) in the broker's network, and applies the
 * queue's plan on Create and Update (shared/topology/topology-resource.ts). Its properties carry the
 * plan's entity names and digest computed at synth: a changed plan changes them, so CloudFormation
 * sends an Update; an unchanged one sends none. The pull schedule and the event source mapping depend
 * on it (queue-functions.ts), so no function is invoked before its queues exist.
 */
import { CustomResource, Duration } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { TopologyResourceProperties } from '../topology/resource-work.js';
import type { DeployedQueue } from './deployed-queue.js';
import { boomerangFunction } from './function.js';
import { functionSpec, type Shared } from './queue-functions.js';

/** The resource type in the template and the stack's events. */
const RESOURCE_TYPE = 'Custom::BoomerangTopology';

/**
 * Its function's sizing: a connection (a cold start in a VPC, the secret read), then a few declares per
 * entity; the handler answers FAILED 15 s before the timeout if the broker has not finished by then.
 */
const SIZING = { timeoutSeconds: 120, memoryMb: 256 } as const;

/**
 * The topology custom resource of `queue` and its function, which may read the broker secret and
 * nothing else. Returns the resource, for the schedules and mappings to depend on.
 * @example const topology = queueTopology(this, queue, shared); rule.node.addDependency(topology);
 */
function queueTopology(scope: Construct, queue: DeployedQueue, shared: Shared): CustomResource {
  const { idempotencyStatements: _none, ...spec } = functionSpec(queue, 'topology', shared, undefined);
  const { fn } = boomerangFunction(scope, { ...spec, sizing: SIZING, statements: [shared.readSecret] });
  const properties: TopologyResourceProperties = {
    Queue: queue.name,
    WorkQueue: queue.workQueue,
    VirtualHost: queue.deploy.virtualHost,
    Entities: queue.topology.entities,
    PlanDigest: queue.topology.digest,
  };
  return new CustomResource(scope, `${spec.id}Resource`, {
    serviceToken: fn.functionArn,
    resourceType: RESOURCE_TYPE,
    properties,
    // CloudFormation's own limit is an hour; the handler always answers well before this.
    serviceTimeout: Duration.seconds(SIZING.timeoutSeconds + 60),
  });
}

export { queueTopology };
