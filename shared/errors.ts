/**
 * Error classes. Every class sets a string-literal `name` (esbuild's minifier mangles
 * `constructor.name`), and classification goes by `name` or the duck-typed fields, never only by
 * `instanceof`: a handler may throw errors from another copy of this module, or its own.
 */
import type { Summary } from './core/summary.js';
import type { TopologyWarning } from './topology/queue-checks.js';

/** Base class of the errors Boomerang itself raises. */
class RetryFunctionError extends Error {
  /** Whether trying the same thing again later can succeed. */
  public readonly retryable: boolean;

  public constructor(message: string, options?: ErrorOptions & { retryable?: boolean }) {
    super(message, options);
    this.name = 'RetryFunctionError';
    this.retryable = options?.retryable ?? false;
  }
}

/** A configuration value (environment variable or option) is missing or invalid. */
class ConfigError extends RetryFunctionError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

/**
 * Why a connection could not be opened: nothing listens on the port (`refused`), the host name does
 * not resolve, the login or the vhost was refused, the TLS certificate names another host or has no
 * trusted CA, the port does not speak TLS (`tls`), no answer in time, or anything else (`unreachable`).
 */
type BrokerFailureReason =
  | 'refused'
  | 'unresolved'
  | 'login-refused'
  | 'vhost-refused'
  | 'tls-hostname'
  | 'tls-untrusted'
  | 'tls'
  | 'timeout'
  | 'unreachable'
  /** Connected, then the connection dropped (or the broker closed it) mid-invocation. */
  | 'connection-lost'
  /** Connected, then the broker closed the channel (a channel error: 404, 406, ...). */
  | 'channel-closed';

/** The broker could not be reached, refused the login, or the connection broke mid-invocation. */
class BrokerConnectionError extends RetryFunctionError {
  /** What went wrong, when known: why opening failed, or what was lost later. */
  public readonly reason: BrokerFailureReason | undefined;

  public constructor(message: string, options?: ErrorOptions & { reason?: BrokerFailureReason }) {
    super(message, { ...options, retryable: true });
    this.name = 'BrokerConnectionError';
    this.reason = options?.reason;
  }
}

/** An existing queue or exchange differs from what the topology expects. */
class TopologyMismatchError extends RetryFunctionError {
  public readonly kind: 'queue' | 'exchange';
  public readonly entity: string;
  public readonly argument: string | undefined;
  /** Where messages can be dropped, found by the same run (apply reports them even when it throws). */
  public readonly warnings: readonly TopologyWarning[];

  public constructor(
    message: string,
    details: { kind: 'queue' | 'exchange'; entity: string; argument?: string; warnings?: readonly TopologyWarning[] },
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'TopologyMismatchError';
    this.kind = details.kind;
    this.entity = details.entity;
    this.argument = details.argument;
    this.warnings = details.warnings ?? [];
  }
}

/**
 * The delay path (or parking lot) the current config plans is missing on the broker: the config
 * changed (`MAX_RETRIES`, `BACKOFF_*`, `RETRY_RULES`, `DELAY_MODE`) after `topology apply`, or a queue
 * was deleted. Every copy would come back unroutable, so the invocation takes no message (or stops
 * at the first such copy) and fails until the topology is applied again; nothing waits on a retry.
 */
class TopologyDriftError extends RetryFunctionError {
  /** Queues and exchanges the config needs that the broker does not have (empty when only a copy was returned). */
  public readonly missing: readonly string[];
  /** What the invocation did before it stopped (a drift found at start did nothing). */
  public readonly summary: Summary | undefined;

  public constructor(message: string, details: { missing: readonly string[]; summary?: Summary }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TopologyDriftError';
    this.missing = details.missing;
    this.summary = details.summary;
  }
}

/**
 * A message's body is over `MAX_MESSAGE_BYTES`: no copy of it can be published (the broker would close
 * the channel), so it can be neither retried nor parked. The original stays in the work queue.
 */
class MessageTooLargeError extends RetryFunctionError {
  public constructor(message: string, public readonly summary: Summary, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MessageTooLargeError';
  }
}

/** A copy could not be published with a positive confirm (nacked, returned as unroutable, or timed out). */
class PublishError extends RetryFunctionError {
  public readonly reason: 'nacked' | 'returned' | 'timeout' | 'channel-closed' | 'rejected-locally' | 'too-large';

  public constructor(message: string, reason: PublishError['reason'], options?: ErrorOptions) {
    super(message, { ...options, retryable: true });
    this.name = 'PublishError';
    this.reason = reason;
  }
}

/**
 * Throw from a handler to ask for a retry, optionally no sooner than `retryAfterMs`.
 * Any thrown error is retried unless it says `retryable === false`; this class only adds the delay hint.
 * @example throw new RetryableError('partner answered 429', { retryAfterMs: 30_000 });
 */
class RetryableError extends Error {
  public readonly retryable = true;
  public readonly retryAfterMs: number | undefined;

  public constructor(message: string, options?: ErrorOptions & { retryAfterMs?: number }) {
    super(message, options);
    this.name = 'RetryableError';
    this.retryAfterMs = options?.retryAfterMs;
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
 * Why Boomerang parked a message without calling the handler: the broker says it was delivered so
 * often without being settled that its handler very likely crashes the process (out of memory, a
 * Lambda timeout, SIGKILL). Only ever the error of a parked copy (`boomerang-error-name`), never thrown.
 */
class CrashLoopError extends RetryFunctionError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CrashLoopError';
  }
}

/**
 * What a handler's attempt failed with when the invocation budget cut it off: the attempt counts (a
 * retry copy, or a park past the limit), so a message that always outlasts the budget cannot stall
 * its queue. Only ever the error of a retried or parked copy, never thrown.
 */
class HandlerCutOffError extends RetryFunctionError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, { ...options, retryable: true });
    this.name = 'HandlerCutOffError';
  }

  /**
   * `what` happened to the attempt, followed by the handler's own error (also the cause), if it threw one.
   * @example HandlerCutOffError.of('still running at the hard stop', undefined)
   */
  public static of(what: string, thrown: unknown): HandlerCutOffError {
    const detail = thrown instanceof Error ? `: ${thrown.name}: ${thrown.message}` : '';
    return new HandlerCutOffError(`${what}${detail}`, thrown === undefined ? undefined : { cause: thrown });
  }
}

/**
 * A pull invocation could not finish: the connection or the channel was lost. Unsettled messages went
 * back to the work queue; `summary` is what it did up to then, its `stoppedBecause` says which was lost.
 */
class PullAbortedError extends BrokerConnectionError {
  public constructor(message: string, public readonly summary: Summary, options?: ErrorOptions & { reason?: BrokerFailureReason }) {
    super(message, options);
    this.name = 'PullAbortedError';
  }
}

/** An event batch was not settled: the invocation fails, and the event source delivers the whole batch again. */
class EventBatchError extends RetryFunctionError {
  public constructor(message: string, public readonly summary: Summary, options?: ErrorOptions) {
    super(message, { ...options, retryable: true });
    this.name = 'EventBatchError';
  }
}

/** The input is not an `aws:rmq` event at all: nothing in it can be parked, so the invocation fails. */
class EventShapeError extends RetryFunctionError {
  public constructor(message: string) {
    super(message);
    this.name = 'EventShapeError';
  }
}

/** Secrets Manager could not give the secret's value; `code` is the service's error name. */
class SecretFetchError extends RetryFunctionError {
  public readonly code: string;

  public constructor(message: string, code: string, options?: ErrorOptions & { retryable?: boolean }) {
    super(message, options);
    this.name = 'SecretFetchError';
    this.code = code;
  }
}

/** A parking-lot command could not do what it was asked; nothing was lost (the message is still parked). */
class ParkedCommandError extends RetryFunctionError {
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
    public readonly consumers: number,
  ) {
    super(`${queue} has ${consumers} consumer(s): another parked command (or a stray consumer) is reading it. Wait for it to finish, or find it in the management UI (Queues > ${queue} > Consumers).`);
    this.name = 'ParkingLotBusyError';
  }
}

/**
 * Another run holds the message's key (it is handling the same message right now, or it crashed less
 * than its remaining time ago). Running now could repeat the effect, so the message must come back
 * later: the engine neither counts an attempt nor parks it.
 */
class IdempotencyInProgressError extends RetryFunctionError {
  /** The message's idempotency key (the messageId unless a key function was given). */
  public readonly key: string;

  public constructor(key: string, options?: ErrorOptions) {
    super(`Another run is handling the message with idempotency key ${JSON.stringify(key)}; it comes back later and runs if that run fails or never finishes.`, { ...options, retryable: true });
    this.name = 'IdempotencyInProgressError';
    this.key = key;
  }
}

/**
 * The idempotency store could not be reached or refused a read or write, so the guard cannot tell a
 * duplicate from a first run; the handler was not called, and the message must be retried later.
 */
class IdempotencyStoreError extends RetryFunctionError {
  /** The store, with any password redacted (`redis://cache:6379`, `dynamodb:boomerang-idempotency`). */
  public readonly store: string;

  public constructor(store: string, cause: unknown) {
    super(`The idempotency store ${store} failed (${describeCause(cause)}); the handler was not called and the message is retried later. Check that the store is reachable from the function and that its table or server exists.`, { cause, retryable: true });
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

export {
  BrokerConnectionError,
  EventBatchError,
  EventShapeError,
  ParkedCommandError,
  ParkingLotBusyError,
  PullAbortedError,
  SecretFetchError,
  UsageError,
  CrashLoopError,
  ConfigError,
  HandlerCutOffError,
  IdempotencyInProgressError,
  IdempotencyStoreError,
  MessageTooLargeError,
  PublishError,
  RetryableError,
  RetryFunctionError,
  TopologyDriftError,
  TopologyMismatchError,
  UnrecoverableError,
};
export type { BrokerFailureReason };
