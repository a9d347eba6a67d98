/** Plain data that describes the broker-side topology; built by pure functions, applied by `apply.ts`. */
import type { PolicyFix } from './policy-fix.js';

/** Queue type for the delay and parking queues (and a work queue Boomerang creates). */
type QueueType = 'quorum' | 'classic';

/**
 * How the delay path is built: one queue per backoff tier, binary levels for arbitrary delays, or
 * none at all (`native`: RabbitMQ 4.3's quorum queue holds a failed message until the time its
 * settlement names, and dead-letters a parked one; see docs/topology.md#native).
 */
type DelayMode = 'tiers' | 'exact' | 'native';

/** What the builders need to know; derived from `Config` by `topologyOptionsFromConfig`. */
type TopologyOptions = {
  readonly workQueue: string;
  readonly parkingQueue: string;
  readonly delayMode: DelayMode;
  readonly queueType: QueueType;
  /** `tiers` mode: the distinct delays the policy (and its rules) can produce, ascending. */
  readonly tierDelaysMs: readonly number[];
  /** `exact` mode: the length of one time unit; level k holds a message for 2^k units. */
  readonly delayResolutionMs: number;
  /** `exact` mode: the longest delay the levels must cover. */
  readonly maxDelayMs: number;
  /**
   * `exact` mode: first words of the shared level, delivery and unroutable names. Every work queue of a
   * vhost shares them, so production keeps the default; tests pass a unique one to stay isolated.
   * @default 'boomerang.delay'
   */
  readonly exactNamePrefix?: string;
  /**
   * The broker's RabbitMQ version (`'4.3.6'`), which decides the parking lot's `x-delivery-limit`:
   * -1 on 4.x, none on 3.x (where -1 drops at the first failed delivery). From `brokerVersionOf(connection)`.
   * @default undefined: no `x-delivery-limit` (right for 3.x; on 4.x verify then warns of the default 20)
   */
  readonly brokerVersion?: string;
  /**
   * `native` mode: what the work queue's delayed-retry range and delivery limit are made of (see
   * native-queue.ts). Required in that mode, ignored in the others.
   * @default undefined
   */
  readonly native?: NativeRetryOptions;
};

/** What a `native` work queue's arguments are derived from; `topologyOptionsFromConfig` fills it in. */
type NativeRetryOptions = {
  /** The highest `maxRetries` of the policy and its retrying rules. */
  readonly maxRetries: number;
  /** `CRASH_LOOP_LIMIT`: returns counted at which the crash-loop guard parks a delivery untried; 0 = off. */
  readonly crashLoopLimit: number;
  /** The shortest delay the policy and its retrying rules can ask for (the first retry, at full negative jitter). */
  readonly minDelayMs: number;
};

type QueueRole = 'work' | 'parking' | 'notes' | 'delay' | 'unroutable';

type QueueSpec = {
  readonly name: string;
  readonly role: QueueRole;
  /** AMQP `x-*` arguments, exactly as declared. */
  readonly arguments: Readonly<Record<string, string | number>>;
  /**
   * The work queue belongs to the team: declared only when missing, its arguments never checked.
   * Not in `native` mode, where its arguments (or a policy) are what makes the mode work: checked.
   */
  readonly onlyIfMissing: boolean;
};

type ExchangeSpec = {
  readonly name: string;
  readonly type: 'topic' | 'fanout' | 'direct';
  readonly arguments: Readonly<Record<string, string | number>>;
};

type BindingSpec = {
  /** A queue bound to an exchange, or an exchange bound to an exchange. */
  readonly destinationKind: 'queue' | 'exchange';
  readonly destination: string;
  readonly source: string;
  readonly pattern: string;
};

/** Everything one work queue needs, in declaration order (exchanges, queues, then bindings). */
type TopologyPlan = {
  readonly exchanges: readonly ExchangeSpec[];
  readonly queues: readonly QueueSpec[];
  readonly bindings: readonly BindingSpec[];
  /**
   * The delay-path marker: an exchange that `apply` declares last, once everything else matched, and
   * whose name is a digest of every destination of the config. A cold start that finds it checks one
   * name instead of each destination (see delay-path-check.ts). Undefined when the name would be too
   * long; the check then looks at each destination.
   */
  readonly marker?: string;
};

/** Where to publish a copy so that it comes back to the work queue after (at least) a delay. */
type DelayRoute = {
  readonly exchange: string;
  readonly routingKey: string;
  /** The delay the route really gives (a tier, or a whole number of resolution units). */
  readonly delayMs: number;
};

/** A queue or exchange argument value as AMQP carries it. */
type ArgumentValue = string | number | boolean;
/** An entity's arguments, by name. */
type ArgumentTable = Readonly<Record<string, ArgumentValue>>;

/** One argument that differs between the plan and an existing entity (`undefined` = not set). */
type ArgumentDifference = {
  readonly kind: 'queue' | 'exchange';
  readonly name: string;
  readonly argument: string;
  /** What the plan declares (the broker's "received"). */
  readonly expected: string | undefined;
  /** What the existing entity has (the broker's "current"). */
  readonly actual: string | undefined;
  /** The AMQP type of `actual` when the broker names it (`long`, `longstr`, `bool`...). */
  readonly actualType?: string;
};

/** Something that can lose messages and that Boomerang cannot change over AMQP; `fix` is the policy it offers. */
type TopologyWarning = { readonly queue: string; readonly message: string; readonly fix?: PolicyFix };

/**
 * A queue's effective policy: the policy's name (empty when none applies) and its definition merged
 * with any operator policy, as `rabbitmqctl list_queues name policy effective_policy_definition` and
 * the management API give them. AMQP cannot read policies.
 */
type QueuePolicy = { readonly name: string; readonly definition: Readonly<Record<string, unknown>> };

/** A port: reads the effective policy of a queue of the vhost; `undefined` when the queue is not listed. */
type PolicyReader = (queue: string) => Promise<QueuePolicy | undefined>;

export type {
  ArgumentDifference,
  ArgumentTable,
  ArgumentValue,
  BindingSpec,
  DelayMode,
  DelayRoute,
  ExchangeSpec,
  NativeRetryOptions,
  PolicyReader,
  QueuePolicy,
  QueueRole,
  QueueSpec,
  QueueType,
  TopologyOptions,
  TopologyPlan,
  TopologyWarning,
};
