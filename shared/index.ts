/**
 * Boomerang's public entry point: `import { … } from 'boomerang-rabbitmq'` (the package's `exports`). A team's
 * function file needs nothing else: `defineQueue` (one queue: its handler, options and deploy), the factories, the error classes a handler throws or a caller
 * catches (exactly those: see docs/architecture.md, "Errors"), and the types of a handler, a message, a rule and a summary.
 */
export { defineQueue } from './queues/define-queue.js';
export type { QueueDefinition } from './queues/define-queue.js';
export type { QueueOptions } from './queues/queue-options.js';
export type { AdvancedOptions } from './config/config-in-code.js';
export type { DeployOptions, Mode } from './queues/deploy-options.js';
export { createPullFunction } from './pull/pull-function.js';
export type { PullContext } from './pull/pull-function.js';
export { createEventFunction } from './event/event-function.js';
export type { EventContext } from './event/event-function.js';
export {
  BoomerangError,
  BrokerConnectionError,
  ConfigError,
  EventShapeError,
  HandlerTimeoutError,
  isNamedError,
  PublishError,
  RetryableError,
  RetryFunctionError,
  SecretFetchError,
  UnrecoverableError,
} from './errors.js';
export { EventBatchError, PullAbortedError, TopologyDriftError } from './core/invocation-errors.js';
export { TopologyMismatchError } from './topology/mismatch.js';
export type { BoomerangMessage, Handler, HandlerContext } from './message/message.js';
export type { RetryRule, RetryRuleMatch } from './retry/retry-rules.js';
export type { RetryPolicy } from './retry/retry-policy.js';
export type { AckOrder, Config } from './config/config.js';
export type { DelayMode, QueueType } from './topology/types.js';
export type { Summary, StopReason } from './observability/summary.js';
export type { IdempotencyInCode } from './idempotency/in-code.js';
export type { IdempotencyStoreSpec } from './idempotency/options.js';
export type { RateLimitInCode } from './config/rate-limit.js';
