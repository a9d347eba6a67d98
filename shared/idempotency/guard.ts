import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { powertoolsSecretStore, type SecretStore } from '../amqp/secrets.js';
import { ConfigError } from '../errors.js';
import type { BoomerangMessage } from '../message/message.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { claimKey } from './claim-key.js';
import { describeStore, type IdempotencyOptions, type ResolvedIdempotencyOptions, resolveIdempotencyOptions } from './options.js';
import type { StoreHandle } from './store-handle.js';
import { classifyGuardFailure } from './refusal.js';

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
  /**
   * Where a Redis store's password secret is read (tests point one at a local endpoint).
   * @default a Powertools SecretsProvider of the guard's own, values `store.secretCacheSeconds` old at most
   */
  readonly secrets?: SecretStore;
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
  const config = new IdempotencyConfig({ expiresAfterSeconds: resolved.ttlSeconds });
  // Powertools would run every message unguarded, silently: refuse instead.
  if (!config.isEnabled()) {
    throw new ConfigError(
      'POWERTOOLS_IDEMPOTENCY_DISABLED is set while idempotency is configured: unset it, or turn idempotency off (unset IDEMPOTENCY_STORE or the `idempotency` option)',
    );
  }
  const logger = deps.logger ?? createLogger();
  let store: StoreHandle | undefined;
  const opening = openStore(resolved, { ...deps, logger }).then((opened) => {
    // Once per guard, not per message: Powertools' IdempotencyHandler configures the layer in the same
    // way (the first call wins); each run's time left goes to saveInProgress as an argument.
    opened.persistence.configure({ config, keyPrefix: resolved.keyPrefix });
    store = opened;
    return opened;
  });
  // A store that cannot be loaded fails each run as a store failure; the promise itself is not news.
  opening.catch(() => undefined);
  const storeName = describeStore(resolved.store);
  // The keyed runs of this guard under way: a second delivery of a message this process is running (a
  // batch that holds it twice) waits for the first's outcome, then claims. Claimed at once, it would
  // find the key in progress and go to the delay path as a copy, where after the wait it finds the key
  // completed: a duplicate, acked. One process only: another process's run is what the store is for.
  const underWay = new Map<string, Promise<IdempotencyOutcome>>();

  const run = async (message: BoomerangMessage, work: () => Promise<void>, remainingMs: number): Promise<IdempotencyOutcome> => {
    if (!Number.isFinite(remainingMs)) throw new RangeError(`Expected \`remainingMs\` to be a finite number of milliseconds, got ${remainingMs}`);
    const raw = resolved.key(message);
    if (raw === undefined || raw === null || raw === '') {
      await work();
      return 'no-key';
    }
    const key = String(raw);
    const deadline = Date.now() + remainingMs;
    const earlier = underWay.get(key);
    const outcome = earlier === undefined ? runKeyed(key, work, deadline) : afterEarlier(earlier, key, work, deadline);
    underWay.set(key, outcome);
    try {
      return await outcome;
    } finally {
      if (underWay.get(key) === outcome) underWay.delete(key);
    }
  };

  /** A run of a key this guard is running already: it starts once the earlier run settled, whichever way. */
  const afterEarlier = (earlier: Promise<IdempotencyOutcome>, key: string, work: () => Promise<void>, deadline: number): Promise<IdempotencyOutcome> => {
    const next = (): Promise<IdempotencyOutcome> => runKeyed(key, work, deadline);
    return earlier.then(next, next);
  };

  /** One keyed run: claim, work, complete (or release the key when the work throws). */
  const runKeyed = async (key: string, work: () => Promise<void>, deadline: number): Promise<IdempotencyOutcome> => {
    let persistence: StoreHandle['persistence'];
    try {
      persistence = (store ?? (await opening)).persistence;
      if ((await claimKey(persistence, key, deadline)) === 'completed') return 'duplicate';
    } catch (error) {
      throw classifyGuardFailure(error, key, storeName);
    }
    // Each run in an event-loop turn of its own: the in-progress writes of the handlers running at
    // once are answered together, and without this their handlers would all make their effects in
    // one turn before the first "completed" write is sent. A kill between an effect and its write
    // repeats the effect: this keeps that window to one handler's own path, not eight.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      await work();
    } catch (error) {
      // The in-progress record stays until `remainingMs` runs out; the retry waits for that. The
      // handler's error still decides retry or park.
      await persistence.deleteRecord(key).catch((storeError: unknown) => {
        logger.warn("idempotency: the failed run's key could not be released; its retry waits until this invocation's time is up", {
          key,
          store: storeName,
          error: String(storeError),
        });
      });
      throw error;
    }
    try {
      await persistence.saveSuccess(key, undefined);
    } catch (error) {
      // The effect happened: throwing would retry it, and the retry would repeat it once the
      // in-progress record expires. Ack, and say that a duplicate of this message could run again.
      logger.warn('idempotency: the run completed but its key could not be marked completed; a duplicate arriving after this invocation would run again', {
        key,
        store: storeName,
        error: String(error),
      });
    }
    return 'ran';
  };

  return {
    run,
    close: async () => {
      await (await opening.catch(() => undefined))?.close();
    },
  };
}

/**
 * The store's client, loaded on demand: a function on Redis never loads the DynamoDB SDK (about
 * 200 ms of CPU to load, measured on the development machine), nor one on DynamoDB the Redis client.
 */
async function openStore(options: ResolvedIdempotencyOptions, deps: IdempotencyGuardDeps): Promise<StoreHandle> {
  const { store } = options;
  if (store.kind === 'redis') {
    const { createRedisStore } = await import('./redis-store.js');
    if (store.secretId === undefined) return createRedisStore(store.url);
    const secrets = deps.secrets ?? powertoolsSecretStore({ maxAgeSeconds: store.secretCacheSeconds });
    return createRedisStore(store.url, { secretId: store.secretId, secrets, log: deps.logger });
  }
  const { createDynamoDbStore } = await import('./dynamodb-store.js');
  return createDynamoDbStore(store.table, store.endpoint, deps.dynamoDbClientConfig);
}

export { createIdempotencyGuard };
export type { IdempotencyGuard, IdempotencyGuardDeps, IdempotencyOutcome };
