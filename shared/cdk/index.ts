/**
 * The CDK construct of Boomerang: `import { BoomerangQueues } from 'boomerang-rabbitmq/cdk'` in a team's
 * CDK app. It needs the optional peer dependencies aws-cdk-lib and constructs; the runtime's entry point
 * (`boomerang-rabbitmq`) never loads this.
 */
export { BoomerangQueues } from './boomerang-queues.js';
export type { BoomerangQueuesProps } from './boomerang-queues-props.js';
export type { BrokerEndpoint } from './broker.js';
export { ENGINE_VERSIONS } from './broker-options.js';
export type { CreateBrokerOptions, EngineVersion } from './broker-options.js';
export type { Bundle, Cost } from './bundle-report.js';
export type { DeployedQueue } from './deployed-queue.js';
export { IdempotencyTable } from './idempotency-table.js';
export type { IdempotencyTableProps } from './idempotency-table.js';
export type { Network } from './network.js';
