import { closestHint } from '../config/did-you-mean.js';
import { ConfigError } from '../errors.js';
import { parseDurationMs } from '../config/duration.js';

/** How a queue is served: `pull`, the scheduled function; `event`, the Amazon MQ event source mapping and its function. */
type Mode = 'pull' | 'event';

const MODES: readonly Mode[] = ['pull', 'event'];

/** How the stack deploys one queue (`deploy` of `defineQueue`); every field is optional. */
type DeployOptions = {
  /**
   * The functions that serve the queue. Both only with `acknowledgeCompetingModes: true`: they then
   * compete for its messages (each message goes to one of them).
   * @default ['pull']
   */
  readonly modes?: readonly Mode[];
  /** Deploy `pull` and `event` together although they compete for the queue's messages. @default false */
  readonly acknowledgeCompetingModes?: boolean;
  /** The vhost of the queue: the mapping's VIRTUAL_HOST and the functions' AMQP_VHOST. @default '/' */
  readonly virtualHost?: string;
  readonly pull?: {
    /** The schedule: one invocation every this many minutes, 1 to 1440. @default 1 */
    readonly rateMinutes?: number;
    /** Reserved concurrency, 0 to 1000; 0 leaves it unreserved. 1 keeps overlapping ticks from competing. @default 1 */
    readonly reservedConcurrency?: number;
    /** @default 60 */
    readonly timeoutSeconds?: number;
    /** @default 256 */
    readonly memoryMb?: number;
  };
  readonly event?: {
    /** The event source mapping's batch size, 1 to 10000. @default 100 */
    readonly batchSize?: number;
    /** MaximumBatchingWindowInSeconds, 0 to 300; unset keeps the service default (500 ms), which cannot be set back once changed. */
    readonly batchWindowSeconds?: number;
    /** @default 60 */
    readonly timeoutSeconds?: number;
    /** @default 256 */
    readonly memoryMb?: number;
  };
  /**
   * The alarm on how full the parking lot is: it goes off when the `parkedDepth` metric (the depth each
   * invocation reads after it settled) is above this many messages, its Maximum over 5 minutes (over
   * the pull schedule's interval when that is longer). It stays on until the lot is back at or below the
   * threshold; a period without an invocation is not breaching. `false`: no such alarm.
   * @default 0 (any message waiting in the parking lot)
   */
  readonly parkedDepthAlarm?: number | false;
  /**
   * Retention: a small function, invoked on a schedule, deletes the parked messages parked at least
   * `olderThan` ago (what `boomerang parked purge --older-than <olderThan> --yes` does). Off when unset.
   * @default off
   */
  readonly retention?: {
    /** How long a message stays parked before it is deleted: '14d', '36h'; at least 1h. Required. */
    readonly olderThan: string;
    /** The schedule: one run every this many hours, 1 to 720. @default 24 */
    readonly rateHours?: number;
    /** @default 300 */
    readonly timeoutSeconds?: number;
    /** @default 256 */
    readonly memoryMb?: number;
  };
};

/** Retention as the stack deploys it (`DeployOptions.retention`, checked, with its defaults). */
type ResolvedRetention = FunctionSizing & {
  /** As written: '14d'. */
  readonly olderThan: string;
  readonly olderThanMs: number;
  readonly rateHours: number;
};

/** Timeout and memory of one function. */
type FunctionSizing = { readonly timeoutSeconds: number; readonly memoryMb: number };

/** `DeployOptions` with every default applied and every value checked. */
type ResolvedDeploy = {
  readonly modes: readonly Mode[];
  readonly virtualHost: string;
  readonly pull: FunctionSizing & { readonly rateMinutes: number; readonly reservedConcurrency: number };
  readonly event: FunctionSizing & { readonly batchSize: number; readonly batchWindowSeconds: number | undefined };
  /** The parked-depth alarm's threshold; undefined: no alarm. */
  readonly parkedDepthAlarm: number | undefined;
  /** Undefined: no retention function. */
  readonly retention: ResolvedRetention | undefined;
  /**
   * The stack creates a DynamoDB idempotency table for this queue, grants its functions the guard's
   * item calls on it and sets their IDEMPOTENCY_STORE: `idempotency: { store: 'dynamodb' }` asks for it.
   */
  readonly idempotencyTable: boolean;
};

/** The defaults, in one place. */
const DEPLOY_DEFAULTS = {
  modes: ['pull'],
  virtualHost: '/',
  pull: { rateMinutes: 1, reservedConcurrency: 1, timeoutSeconds: 60, memoryMb: 256 },
  event: { batchSize: 100, timeoutSeconds: 60, memoryMb: 256 },
  parkedDepthAlarm: 0,
  retention: { rateHours: 24, timeoutSeconds: 300, memoryMb: 256 },
} as const;

/** Shorter than this, retention would delete what a human has had no time to look at. */
const MIN_RETENTION_MS = 3_600_000;

const KEYS = {
  deploy: ['modes', 'acknowledgeCompetingModes', 'virtualHost', 'pull', 'event', 'parkedDepthAlarm', 'retention'],
  pull: ['rateMinutes', 'reservedConcurrency', 'timeoutSeconds', 'memoryMb'],
  event: ['batchSize', 'batchWindowSeconds', 'timeoutSeconds', 'memoryMb'],
  retention: ['olderThan', 'rateHours', 'timeoutSeconds', 'memoryMb'],
} as const;

/**
 * Applies the defaults to `deploy` and checks it (pure); throws `ConfigError` naming the option and
 * `source`, e.g. "deploy.pull.rateMinutes in defineQueue('webhooks') must be ...".
 * @example resolveDeploy({ modes: ['event'] }, "defineQueue('orders')").event.batchSize // 100
 */
function resolveDeploy(deploy: DeployOptions = {}, source: string, idempotencyTable = false): ResolvedDeploy {
  const at = (path: string): string => `deploy.${path} in ${source}`;
  refuseUnknown(deploy, KEYS.deploy, 'deploy', source);
  refuseUnknown(deploy.pull ?? {}, KEYS.pull, 'deploy.pull', source);
  refuseUnknown(deploy.event ?? {}, KEYS.event, 'deploy.event', source);
  refuseUnknown(deploy.retention ?? {}, KEYS.retention, 'deploy.retention', source);
  const modes = resolveModes(deploy, source);
  const unused = MODES.find((mode) => !modes.includes(mode) && deploy[mode] !== undefined);
  if (unused !== undefined)
    throw new ConfigError(`deploy.${unused} in ${source} is set, but deploy.modes does not include '${unused}': remove it, or add '${unused}' to the modes`);
  const int = (path: string, value: number | undefined, fallback: number, min: number, max: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value < min || value > max)
      throw new ConfigError(`${at(path)} must be an integer from ${min} to ${max}; got ${JSON.stringify(value)}`);
    return value;
  };
  const p = deploy.pull ?? {};
  const e = deploy.event ?? {};
  const d = DEPLOY_DEFAULTS;
  const virtualHost = deploy.virtualHost ?? d.virtualHost;
  if (typeof virtualHost !== 'string' || virtualHost === '')
    throw new ConfigError(`${at('virtualHost')} must be a vhost name such as '/'; got ${JSON.stringify(virtualHost)}`);
  return Object.freeze({
    modes,
    virtualHost,
    idempotencyTable,
    pull: {
      rateMinutes: int('pull.rateMinutes', p.rateMinutes, d.pull.rateMinutes, 1, 1440),
      reservedConcurrency: int('pull.reservedConcurrency', p.reservedConcurrency, d.pull.reservedConcurrency, 0, 1000),
      timeoutSeconds: int('pull.timeoutSeconds', p.timeoutSeconds, d.pull.timeoutSeconds, 10, 900),
      memoryMb: int('pull.memoryMb', p.memoryMb, d.pull.memoryMb, 128, 10_240),
    },
    event: {
      batchSize: int('event.batchSize', e.batchSize, d.event.batchSize, 1, 10_000),
      batchWindowSeconds: e.batchWindowSeconds === undefined ? undefined : int('event.batchWindowSeconds', e.batchWindowSeconds, 0, 0, 300),
      timeoutSeconds: int('event.timeoutSeconds', e.timeoutSeconds, d.event.timeoutSeconds, 10, 900),
      memoryMb: int('event.memoryMb', e.memoryMb, d.event.memoryMb, 128, 10_240),
    },
    parkedDepthAlarm: deploy.parkedDepthAlarm === false ? undefined : int('parkedDepthAlarm', deploy.parkedDepthAlarm, d.parkedDepthAlarm, 0, 1_000_000),
    retention: deploy.retention === undefined ? undefined : resolveRetention(deploy.retention, int, at),
  });
}

type IntOption = (path: string, value: number | undefined, fallback: number, min: number, max: number) => number;

function resolveRetention(retention: NonNullable<DeployOptions['retention']>, int: IntOption, at: (path: string) => string): ResolvedRetention {
  const { olderThan } = retention;
  const olderThanMs = typeof olderThan === 'string' ? parseDurationMs(olderThan) : undefined;
  if (olderThanMs === undefined || olderThanMs < MIN_RETENTION_MS) {
    throw new ConfigError(
      `${at('retention.olderThan')} must be an age of at least 1h, such as '14d' or '36h' (how long a message stays parked before it is deleted); got ${JSON.stringify(olderThan)}`,
    );
  }
  const d = DEPLOY_DEFAULTS.retention;
  return {
    olderThan,
    olderThanMs,
    rateHours: int('retention.rateHours', retention.rateHours, d.rateHours, 1, 720),
    timeoutSeconds: int('retention.timeoutSeconds', retention.timeoutSeconds, d.timeoutSeconds, 10, 900),
    memoryMb: int('retention.memoryMb', retention.memoryMb, d.memoryMb, 128, 10_240),
  };
}

function resolveModes(deploy: DeployOptions, source: string): Mode[] {
  const given = deploy.modes ?? DEPLOY_DEFAULTS.modes;
  if (!Array.isArray(given) || given.length === 0 || given.some((mode) => !(MODES as readonly unknown[]).includes(mode))) {
    throw new ConfigError(`deploy.modes in ${source} must be ['pull'], ['event'] or ['pull', 'event']; got ${JSON.stringify(given)}`);
  }
  const modes = MODES.filter((mode) => given.includes(mode));
  const acknowledged = deploy.acknowledgeCompetingModes;
  if (acknowledged !== undefined && typeof acknowledged !== 'boolean')
    throw new ConfigError(`deploy.acknowledgeCompetingModes in ${source} must be true or false; got ${JSON.stringify(acknowledged)}`);
  if (modes.length === 2 && acknowledged !== true) {
    throw new ConfigError(
      `deploy.modes in ${source} deploys both functions on one queue, and they compete for its messages: each message goes to one of them ` +
        "(per-message acks for pull, whole-batch redelivery for event). Choose one (modes: ['pull'] or ['event']), or set acknowledgeCompetingModes: true to deploy both anyway.",
    );
  }
  if (modes.length < 2 && acknowledged !== undefined) {
    throw new ConfigError(
      `deploy.acknowledgeCompetingModes in ${source} applies only with modes ['pull', 'event']; the modes are ${JSON.stringify(modes)}: remove it`,
    );
  }
  return modes;
}

function refuseUnknown(value: object, known: readonly string[], path: string, source: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(`${path} in ${source} must be an object; got ${JSON.stringify(value)}`);
  const unknown = Object.keys(value).find((key) => !known.includes(key));
  if (unknown !== undefined)
    throw new ConfigError(`Unknown option ${path}.${unknown} in ${source}${closestHint(unknown, known)}; expected one of ${known.join(', ')}`);
}

/**
 * How often the stack runs a queue's pull function, in ms; undefined when it does not deploy one.
 * @example pullScheduleMs(resolveDeploy({}, 'orders')) // 60000
 */
function pullScheduleMs(deploy: Pick<ResolvedDeploy, 'modes' | 'pull'>): number | undefined {
  return deploy.modes.includes('pull') ? deploy.pull.rateMinutes * 60_000 : undefined;
}

export { pullScheduleMs, resolveDeploy };
export type { DeployOptions, FunctionSizing, Mode, ResolvedDeploy, ResolvedRetention };
