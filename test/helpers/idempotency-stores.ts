import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { createIdempotencyGuard, type IdempotencyGuard, type IdempotencyGuardDeps } from '../../shared/idempotency/guard.js';
import type { IdempotencyOptions, IdempotencyStoreSpec } from '../../shared/idempotency/options.js';
import { toBoomerangMessage } from '../../shared/message/boomerang-message.js';
import type { BoomerangMessage } from '../../shared/message/message.js';
import type { Logger } from '../../shared/observability/logger.js';
import { fakeDelivery } from './fakes.js';
import { type Dynalite, startDynalite } from './dynalite.js';

/** The local Redis (or Valkey); tests fail loudly when it does not answer. */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Generous: a test's work runs in well under this; it only bounds a run's in-progress record. */
const REMAINING_MS = 60_000;

/** A message from the queue `orders` with this messageId (none when undefined). */
function message(messageId: string | undefined, body = '{"orderId":42}'): BoomerangMessage {
  return toBoomerangMessage(fakeDelivery({ body, properties: { messageId } }), 'orders', 0);
}

/** A piece of work that counts its runs and, when gated, waits for `release()`; `running` resolves when it first starts. */
function countedWork(gated = false) {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const work = {
    runs: 0,
    running,
    release,
    run: async () => {
      work.runs += 1;
      started();
      if (gated) await gate;
    },
  };
  return work;
}

/** One test's place in a real store: its own key prefix (Redis) or table (DynamoDB). */
type StoreFixture = {
  readonly store: IdempotencyStoreSpec;
  readonly keyPrefix: string;
  readonly deps: IdempotencyGuardDeps;
  /** The TCP port the store listens on (to put a proxy in front of it). */
  readonly port: number;
  /** The same store (same prefix or table) reached through another port of 127.0.0.1. */
  via(port: number): IdempotencyStoreSpec;
  /** How many records (completed or in progress) the test left in the store. */
  records(): Promise<number>;
  cleanup(): Promise<void>;
};

/** A kind of store, started once per test file. */
type StoreKind = {
  readonly name: 'redis' | 'dynamodb';
  start(): Promise<void>;
  fixture(): Promise<StoreFixture>;
  /** The same kind of store where nothing listens. */
  refusing(): Promise<IdempotencyStoreSpec>;
  /** The same kind of store at `endpoint`, a server that accepts connections and never answers. */
  at(endpoint: string): IdempotencyStoreSpec;
  stop(): Promise<void>;
};

function redisKind(): StoreKind {
  const admin = new Redis(REDIS_URL, { lazyConnect: true });
  return {
    name: 'redis',
    start: async () => {
      await admin.connect();
    },
    fixture: async () => {
      const keyPrefix = `test-${randomUUID()}`;
      // Powertools writes `<prefix>#<hash>` and, to take over an orphaned key, `<prefix>#<hash>:lock`.
      const keys = async () => {
        const found: string[] = [];
        for await (const batch of admin.scanStream({ match: `${keyPrefix}#*`, count: 1000 })) found.push(...(batch as string[]));
        return found;
      };
      return {
        store: { kind: 'redis', url: REDIS_URL },
        keyPrefix,
        deps: {},
        port: Number(new URL(REDIS_URL).port || 6379),
        via: (port) => ({ kind: 'redis', url: `redis://127.0.0.1:${port}` }),
        records: async () => (await keys()).filter((key) => !key.endsWith(':lock')).length,
        cleanup: async () => {
          const found = await keys();
          if (found.length > 0) await admin.del(...found);
        },
      };
    },
    refusing: async () => ({ kind: 'redis', url: `redis://127.0.0.1:${await closedPort()}` }),
    at: (endpoint) => ({ kind: 'redis', url: endpoint.replace(/^http:/, 'redis:') }),
    stop: async () => {
      await admin.quit();
    },
  };
}

function dynamoDbKind(): StoreKind {
  let db: Dynalite | undefined;
  const started = (): Dynalite => {
    if (db === undefined) throw new Error('dynalite is not started');
    return db;
  };
  return {
    name: 'dynamodb',
    start: async () => {
      db = await startDynalite();
    },
    fixture: async () => {
      const server = started();
      const table = await server.createTable();
      return {
        store: { kind: 'dynamodb', table, endpoint: server.endpoint },
        keyPrefix: 'test',
        deps: { dynamoDbClientConfig: server.clientConfig },
        port: Number(new URL(server.endpoint).port),
        via: (port) => ({ kind: 'dynamodb', table, endpoint: `http://127.0.0.1:${port}` }),
        records: async () => (await server.items(table)).length,
        // dynalite is in memory and stopped after the file; tables go with it.
        cleanup: async () => undefined,
      };
    },
    refusing: async () => {
      const gone = await startDynalite();
      await gone.stop();
      return { kind: 'dynamodb', table: 'never-reached', endpoint: gone.endpoint };
    },
    at: (endpoint) => ({ kind: 'dynamodb', table: 'never-answered', endpoint }),
    stop: async () => {
      await db?.stop();
    },
  };
}

/** A port nothing listens on (it was free a moment ago, and the kernel does not hand it out again at once). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A TCP server that accepts connections and never says a word: a hung store. `accepted` resolves at its first connection. */
async function silentServer(): Promise<{ readonly endpoint: string; readonly accepted: Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let onAccept = (): void => undefined;
  const accepted = new Promise<void>((resolve) => {
    onAccept = resolve;
  });
  const server: Server = createServer((socket) => {
    onAccept();
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Starts `kind` for the calling describe block, gives each test its own fixture, and closes the
 * guards a test made, then its records, after it. `guard()` called twice is two containers.
 */
function useIdempotencyStore(
  kind: StoreKind,
  logger: Logger,
): {
  fixture(): StoreFixture;
  guard(overrides?: Partial<IdempotencyOptions>): IdempotencyGuard;
} {
  let current: StoreFixture | undefined;
  const guards: IdempotencyGuard[] = [];
  const fixture = (): StoreFixture => {
    if (current === undefined) throw new Error('no store fixture outside a test');
    return current;
  };
  beforeAll(async () => {
    await kind.start();
  });
  afterAll(async () => {
    await kind.stop();
  });
  beforeEach(async () => {
    current = await kind.fixture();
  });
  afterEach(async () => {
    await Promise.all(guards.splice(0).map((g) => g.close()));
    await current?.cleanup();
  });
  return {
    fixture,
    guard: (overrides = {}) => {
      const created = createIdempotencyGuard({ store: fixture().store, keyPrefix: fixture().keyPrefix, ...overrides }, { ...fixture().deps, logger });
      guards.push(created);
      return created;
    },
  };
}

/**
 * A fault scenario's environment with idempotency on, on the local Redis: its keys expire after 10
 * minutes (each scenario's message ids are its own, so none is shared with another run).
 */
const FAULT_IDEMPOTENCY_ENV: Readonly<Record<string, string>> = { IDEMPOTENCY_STORE: REDIS_URL, IDEMPOTENCY_TTL_SECONDS: '600' };

export { closedPort, countedWork, dynamoDbKind, FAULT_IDEMPOTENCY_ENV, message, REDIS_URL, REMAINING_MS, redisKind, silentServer, useIdempotencyStore };
