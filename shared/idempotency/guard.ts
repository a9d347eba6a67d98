import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { IdempotencyConfigOptions } from '@aws-lambda-powertools/idempotency/types';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { ConfigError } from '../errors.js';
import type { BoomerangMessage } from '../message/message.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createDynamoDbStore } from './dynamodb-store.js';
import { describeStore, type IdempotencyOptions, type ResolvedIdempotencyOptions, resolveIdempotencyOptions } from './options.js';
import { createRedisStore } from './redis-store.js';
import type { StoreHandle } from './store-handle.js';
import { classifyGuardFailure } from './store-failure.js';

/** `ran`: the work ran (and its key is now completed); `duplicate`: the key had completed, the work was not called; `no-key`: the message has no key, the work ran unguarded. */
type IdempotencyOutcome = 'ran' | 'duplicate' | 'no-key';

/** Runs a message's work at most once per key, across containers, for the store's expiry window. */
interface IdempotencyGuard {
  /**
   * Runs `work` unless the message's key completed already. Throws `IdempotencyInProgressError` when
   * another run holds the key, `IdempotencyStoreError` when the store fails (work not called), and the
   * work's own error, unchanged, when the work throws (the key is released, so a retry runs it).
   * @param remainingMs the invocation's time left: a crashed run's key is free again after it.
   */
  run(message: BoomerangMessage, work: () => Promise<void>, remainingMs: number): Promise<IdempotencyOutcome>;
  /** Closes the store's client (a Redis connection, the DynamoDB client's sockets). */
  close(): Promise<void>;
}

/** What the guard talks to; tests give a region and credentials for dynalite. */
type IdempotencyGuardDeps = {
  /** Where the guard says why a key stays held after a store failure. @default createLogger() */
  readonly logger?: Logger;
  /** Goes over the DynamoDB client's defaults. @default {} */
  readonly dynamoDbClientConfig?: DynamoDBClientConfig;
};

/**
 * The guard for one function: its store's client is created here, once per container, and connects on first use.
 * @example
 * const guard = createIdempotencyGuard({ store: { kind: 'dynamodb', table: 'orders-idempotency' } });
 * const outcome = await guard.run(message, () => handler(message, context), remainingMs);
 * if (outcome === 'duplicate') summary.skippedDuplicates += 1;
 */
function createIdempotencyGuard(options: IdempotencyOptions, deps: IdempotencyGuardDeps = {}): IdempotencyGuard {
  const resolved = resolveIdempotencyOptions(options);
  // Powertools would run every message unguarded, silently: refuse instead.
  if (!new IdempotencyConfig({}).isEnabled()) {
    throw new ConfigError('POWERTOOLS_IDEMPOTENCY_DISABLED is set while idempotency is configured: unset it, or turn idempotency off (unset IDEMPOTENCY_STORE or the `idempotency` option)');
  }
  const store = openStore(resolved, deps);
  const storeName = describeStore(resolved.store);
  const logger = deps.logger ?? createLogger();

  const run = async (message: BoomerangMessage, work: () => Promise<void>, remainingMs: number): Promise<IdempotencyOutcome> => {
    if (!Number.isFinite(remainingMs)) throw new RangeError(`Expected \`remainingMs\` to be a finite number of milliseconds, got ${remainingMs}`);
    const raw = resolved.key(message);
    if (raw === undefined || raw === null || raw === '') {
      await work();
      return 'no-key';
    }
    const key = String(raw);
    const state: { ran: boolean; failed: boolean; error?: unknown } = { ran: false, failed: false };
    const guarded = makeIdempotent(async (_key: string) => {
      state.ran = true;
      // Each run in an event-loop turn of its own: the in-progress writes of the handlers running at
      // once are answered together, and without this their handlers would all make their effects in
      // one turn before the first "completed" write is sent. A kill between an effect and its write
      // repeats the effect: this keeps that window to one handler's own path, not eight.
      await new Promise<void>((resolve) => setImmediate(resolve));
      try {
        await work();
      } catch (error) {
        state.failed = true;
        state.error = error;
        throw error;
      }
    }, { persistenceStore: store.persistence, keyPrefix: resolved.keyPrefix, config: runConfig(resolved.ttlSeconds, remainingMs) });
    try {
      await guarded(key);
    } catch (error) {
      if (state.failed) {
        // The in-progress record stays until `remainingMs` runs out; the retry waits for that. The
        // handler's error still decides retry or park.
        if (error instanceof Error && error.name === 'IdempotencyPersistenceLayerError') logger.warn('idempotency: the failed run\'s key could not be released; its retry waits until this invocation\'s time is up', { key, store: storeName, error: String(error) });
        throw state.error;
      }
      if (state.ran) {
        // The effect happened: throwing would retry it, and the retry would repeat it once the
        // in-progress record expires. Ack, and say that a duplicate of this message could run again.
        logger.warn('idempotency: the run completed but its key could not be marked completed; a duplicate arriving after this invocation would run again', { key, store: storeName, error: String(error) });
        return 'ran';
      }
      throw classifyGuardFailure(error, key, storeName);
    }
    return state.ran ? 'ran' : 'duplicate';
  };

  return { run, close: () => store.close() };
}

function openStore(options: ResolvedIdempotencyOptions, deps: IdempotencyGuardDeps): StoreHandle {
  return options.store.kind === 'redis'
    ? createRedisStore(options.store.url)
    : createDynamoDbStore(options.store.table, options.store.endpoint, deps.dynamoDbClientConfig);
}

/**
 * One config per run: Powertools reads the in-progress expiry from the Lambda context it holds, and
 * runs in flight at once each have their own time left. Only `getRemainingTimeInMillis` is read.
 */
function runConfig(ttlSeconds: number, remainingMs: number): IdempotencyConfig {
  // At least 1 ms: Powertools treats 0 as "unknown" and writes no in-progress expiry at all.
  const deadline = Date.now() + Math.max(1, remainingMs);
  const lambdaContext = { getRemainingTimeInMillis: () => Math.max(1, deadline - Date.now()) } as unknown as IdempotencyConfigOptions['lambdaContext'];
  return new IdempotencyConfig({ expiresAfterSeconds: ttlSeconds, lambdaContext });
}

export { createIdempotencyGuard };
export type { IdempotencyGuard, IdempotencyGuardDeps, IdempotencyOutcome };
