/**
 * The ground floor's error classes: it imports nothing. Every class sets a string-literal `name`
 * (esbuild's minifier mangles `constructor.name`), and errors are told apart by that `name`
 * ({@link isNamedError}) or the duck-typed fields (`retryable`, `retryAfterMs`, `pauseQueue`), never by `instanceof`:
 * a handler may throw errors from another copy of this module (another bundle), or its own.
 * An error that carries a summary lives with its mode or in core (`core/pull-aborted-error.ts`,
 * `event/event-batch-error.ts`, `core/topology-drift-error.ts`); one that carries topology findings
 * lives with the topology (`topology/mismatch.ts`). See docs/architecture.md, "Errors".
 */

/** Base class of the errors Boomerang itself raises (`name` is each subclass's own). */
class BoomerangError extends Error {
  /** Whether trying the same thing again later can succeed. */
  public readonly retryable: boolean;

  public constructor(message: string, options?: ErrorOptions & { retryable?: boolean }) {
    super(message, options);
    this.name = 'BoomerangError';
    this.retryable = options?.retryable ?? false;
  }
}

/** A configuration value (environment variable or option) is missing or invalid. */
class ConfigError extends BoomerangError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

/**
 * Why a connection could not be opened: nothing listens on the port (`refused`), the host name does
 * not resolve, the login or the vhost was refused, the TLS certificate names another host or has no
 * trusted CA, the port does not speak TLS (`tls`), something other than AMQP answered (`not-amqp`: an
 * HTTP server, say), no answer in time, or anything else (`unreachable`).
 */
type BrokerFailureReason =
  | 'refused'
  | 'unresolved'
  | 'login-refused'
  | 'vhost-refused'
  | 'tls-hostname'
  | 'tls-untrusted'
  | 'tls'
  | 'not-amqp'
  | 'timeout'
  | 'unreachable'
  /** Connected, then the connection dropped (or the broker closed it) mid-invocation. */
  | 'connection-lost'
  /** Connected, then the broker closed the channel (a channel error: 404, 406, ...). */
  | 'channel-closed';

/**
 * The connected broker cannot do what the configuration asks: `DELAY_MODE=native` on a RabbitMQ older
 * than 4.3. The message names the broker's version and the modes that work there.
 */
class UnsupportedBrokerError extends BoomerangError {
  /** The version the broker announced, when it announced one. */
  public readonly brokerVersion: string | undefined;

  public constructor(message: string, options?: ErrorOptions & { brokerVersion?: string }) {
    super(message, options);
    this.name = 'UnsupportedBrokerError';
    this.brokerVersion = options?.brokerVersion;
  }
}

/** The broker could not be reached, refused the login, or the connection broke mid-invocation. */
class BrokerConnectionError extends BoomerangError {
  /** What went wrong, when known: why opening failed, or what was lost later. */
  public readonly reason: BrokerFailureReason | undefined;

  public constructor(message: string, options?: ErrorOptions & { reason?: BrokerFailureReason }) {
    super(message, { ...options, retryable: true });
    this.name = 'BrokerConnectionError';
    this.reason = options?.reason;
  }
}

/** A copy could not be published with a positive confirm (nacked, returned as unroutable, or timed out). */
class PublishError extends BoomerangError {
  public readonly reason: 'nacked' | 'returned' | 'timeout' | 'channel-closed' | 'rejected-locally' | 'too-large';

  public constructor(message: string, reason: PublishError['reason'], options?: ErrorOptions) {
    super(message, { ...options, retryable: true });
    this.name = 'PublishError';
    this.reason = reason;
  }
}

/**
 * Throw from a handler to ask for a retry, optionally no sooner than `retryAfterMs`; with `pauseQueue`
 * (the partner said "slow down": a 429) the invocation also starts no further handler for that time,
 * and the queue's next invocations take nothing until it is over.
 * Any thrown error is retried unless it says `retryable === false`; this class only adds the hints.
 * @example throw new RetryableError('partner answered 429', { retryAfterMs: 30_000, pauseQueue: true });
 */
class RetryableError extends Error {
  public readonly retryable = true;
  public readonly retryAfterMs: number | undefined;
  /** Pause the whole queue for `retryAfterMs` (else this message's retry delay), not only this message. */
  public readonly pauseQueue: boolean;

  public constructor(message: string, options?: ErrorOptions & { retryAfterMs?: number; pauseQueue?: boolean }) {
    super(message, options);
    this.name = 'RetryableError';
    this.retryAfterMs = options?.retryAfterMs;
    this.pauseQueue = options?.pauseQueue ?? false;
  }
}

/**
 * Throw from a handler when trying again cannot help (a malformed message, a 4xx from the partner):
 * the message is parked at once.
 * @example throw new UnrecoverableError('body is not JSON');
 */
class UnrecoverableError extends Error {
  public readonly retryable = false;

  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UnrecoverableError';
  }
}

/**
 * An attempt outlasted its time limit (`attemptTimeoutMs`, ATTEMPT_TIMEOUT_MS): its `signal` aborted,
 * it counts as a failed attempt (retried by the policy, a failure of the partner for the circuit
 * breaker), and whatever the handler does or returns later is ignored.
 */
class HandlerTimeoutError extends BoomerangError {
  /** The limit the attempt outlasted, in ms. */
  public readonly timeoutMs: number;

  public constructor(timeoutMs: number) {
    super(`the handler did not finish within ${timeoutMs} ms (attemptTimeoutMs, ATTEMPT_TIMEOUT_MS): its signal was aborted and its attempt counts as failed`, {
      retryable: true,
    });
    this.name = 'HandlerTimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

/**
 * With idempotency on, a message whose key was claimed but whose handler never started: the invocation
 * stopped (the budget's stop, an open breaker, a store that is down) while the call waited for a
 * handler slot (core/handler-slots.ts). The guard releases the key and the message goes back untried,
 * as one not taken yet would; no caller ever sees this error.
 */
class HandlerNotStartedError extends BoomerangError {
  public constructor() {
    super('the invocation stopped before a handler slot was free: the message was not tried');
    this.name = 'HandlerNotStartedError';
  }
}

/** The input is not an `aws:rmq` event at all: nothing in it can be parked, so the invocation fails. */
class EventShapeError extends BoomerangError {
  public constructor(message: string) {
    super(message);
    this.name = 'EventShapeError';
  }
}

/** Secrets Manager could not give the secret's value; `code` is the service's error name. */
class SecretFetchError extends BoomerangError {
  public readonly code: string;

  public constructor(message: string, code: string, options?: ErrorOptions & { retryable?: boolean }) {
    super(message, options);
    this.name = 'SecretFetchError';
    this.code = code;
  }
}

/** A parking-lot command could not do what it was asked; nothing was lost (the message is still parked). */
class ParkedCommandError extends BoomerangError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ParkedCommandError';
  }
}

/**
 * Someone else consumes the parking lot: the walk would not see the messages they hold, and two
 * walks at once would mix up the order.
 */
class ParkingLotBusyError extends ParkedCommandError {
  public constructor(
    public readonly queue: string,
    /** The consumers the queue had; undefined when the broker refused the read (another reader got there first). */
    public readonly consumers: number | undefined,
    options?: ErrorOptions,
  ) {
    const who = consumers === undefined ? 'the broker refused an exclusive read (ACCESS_REFUSED)' : `${queue} has ${consumers} consumer(s)`;
    super(
      `${who}: another parked command (or a stray consumer) is reading ${queue}. Wait for it to finish, or find it in the management UI (Queues > ${queue} > Consumers).`,
      options,
    );
    this.name = 'ParkingLotBusyError';
  }
}

/**
 * Another run holds the message's key (it is handling the same message right now, or it crashed less
 * than its remaining time ago). Running now could repeat the effect, so the message must come back
 * later: the engine neither counts an attempt nor parks it.
 */
class IdempotencyInProgressError extends BoomerangError {
  /** The message's idempotency key (the messageId unless a key function was given). */
  public readonly key: string;

  public constructor(key: string, options?: ErrorOptions) {
    super(
      `Another run is handling the message with idempotency key ${JSON.stringify(key)}; it comes back later and runs if that run fails or never finishes.`,
      { ...options, retryable: true },
    );
    this.name = 'IdempotencyInProgressError';
    this.key = key;
  }
}

/**
 * The idempotency store could not be reached or refused a read or write, so the guard cannot tell a
 * duplicate from a first run; the handler was not called, and the message must be retried later.
 */
class IdempotencyStoreError extends BoomerangError {
  /** The store, with any password redacted (`redis://cache:6379`, `dynamodb:boomerang-idempotency`). */
  public readonly store: string;

  public constructor(store: string, cause: unknown) {
    super(
      `The idempotency store ${store} failed (${describeCause(cause)}); the handler was not called and the message is retried later. Check that the store is reachable from the function and that its table or server exists.`,
      { cause, retryable: true },
    );
    this.name = 'IdempotencyStoreError';
    this.store = store;
  }
}

/** Powertools wraps the store's own error: show the innermost message, which names the real problem. */
function describeCause(cause: unknown): string {
  let inner = cause;
  while (inner instanceof Error && inner.cause !== undefined) inner = inner.cause;
  if (inner instanceof Error) return `${inner.name}: ${inner.message}`;
  return String(inner);
}

/** Bad command-line input (a flag, an argument, or a file a flag names); a CLI prints it with the usage and exits 2. */
class UsageError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UsageError';
  }
}

/**
 * The old name of {@link BoomerangError}, kept so that existing `catch` code compiles.
 * @deprecated Use `BoomerangError`.
 */
const RetryFunctionError = BoomerangError;
/** @deprecated Use `BoomerangError`. */
type RetryFunctionError = BoomerangError;

/**
 * Whether `error` is an error named `name`: the one way Boomerang tells errors apart, since `name` is a
 * string literal set by each class (so it survives minification and a second copy of this module in
 * another bundle), where `instanceof` would not. `T` is the class the name stands for.
 * @example if (isNamedError<PublishError>(error, 'PublishError') && error.reason === 'returned') ...
 */
function isNamedError<T extends Error = Error>(error: unknown, name: string): error is T {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === name;
}

export {
  BoomerangError,
  BrokerConnectionError,
  ConfigError,
  EventShapeError,
  HandlerNotStartedError,
  HandlerTimeoutError,
  IdempotencyInProgressError,
  IdempotencyStoreError,
  isNamedError,
  ParkedCommandError,
  ParkingLotBusyError,
  PublishError,
  RetryableError,
  RetryFunctionError,
  SecretFetchError,
  UnrecoverableError,
  UnsupportedBrokerError,
  UsageError,
};
export type { BrokerFailureReason };
