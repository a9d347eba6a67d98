import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { powertoolsSecretStore } from '../../shared/amqp/secrets.js';
import { createIdempotencyGuard, type IdempotencyGuard } from '../../shared/idempotency/guard.js';
import { recordingLogger } from '../helpers/fakes.js';
import { countedWork, message, REMAINING_MS } from '../helpers/idempotency-stores.js';
import { type PasswordRedis, startPasswordRedis } from '../helpers/redis-server.js';
import { SecretsEndpoint } from '../helpers/secrets-endpoint.js';

const PASSWORD = `pw-${randomUUID()}`;

let endpoint: SecretsEndpoint;
let server: PasswordRedis;
const guards: IdempotencyGuard[] = [];

beforeAll(async () => {
  endpoint = await SecretsEndpoint.start();
});

afterAll(async () => {
  await endpoint.close();
});

// A server of its own per test: the rotation test changes its password.
beforeEach(async () => {
  server = await startPasswordRedis(PASSWORD);
});

afterEach(async () => {
  await Promise.all(guards.splice(0).map((guard) => guard.close()));
  await server.stop();
});

/** A new secret holding `value`; returns its id. */
function storeSecret(value: string): string {
  const secretId = `test/redis-${randomUUID()}`;
  endpoint.put(secretId, value);
  return secretId;
}

/** How often the endpoint was asked for `secretId`. */
function reads(secretId: string): number {
  return endpoint.requests.filter((request) => request.secretId === secretId).length;
}

/** A guard on the test's server whose password comes from `secretId`, read through Powertools from the local endpoint (values cached 300 s). */
function guardWithSecret(secretId: string, log = recordingLogger()): IdempotencyGuard {
  const guard = createIdempotencyGuard(
    { store: { kind: 'redis', url: server.url, secretId }, keyPrefix: `test-${randomUUID()}` },
    { secrets: powertoolsSecretStore({ clientConfig: endpoint.clientConfig, maxAgeSeconds: 300 }), logger: log.log },
  );
  guards.push(guard);
  return guard;
}

describe('createIdempotencyGuard on a Redis server that asks for a password, the password from a secret', () => {
  it('logs in with a plain-string secret: runs a key once, then skips its duplicate', async () => {
    // Prepare
    const secretId = storeSecret(PASSWORD);
    const guard = guardWithSecret(secretId);
    const work = countedWork();
    // Act
    const first = await guard.run(message('m-1'), work.run, REMAINING_MS);
    const second = await guard.run(message('m-1'), work.run, REMAINING_MS);
    // Assess
    expect([first, second]).toEqual(['ran', 'duplicate']);
    expect(work.runs).toBe(1);
    expect(await server.admin.dbsize()).toBe(1);
    expect(reads(secretId)).toBe(1);
  });

  it('logs in as the user of a JSON secret {"username", "password"}', async () => {
    // Prepare
    const userPassword = `user-pw-${randomUUID()}`;
    await server.admin.call('ACL', 'SETUSER', 'boomerang', 'on', `>${userPassword}`, '~*', '+@all');
    const guard = guardWithSecret(storeSecret(JSON.stringify({ username: 'boomerang', password: userPassword })));
    const work = countedWork();
    // Act
    const outcome = await guard.run(message('m-1'), work.run, REMAINING_MS);
    // Assess
    expect(outcome).toBe('ran');
    expect(String(await server.admin.call('CLIENT', 'LIST'))).toContain('user=boomerang');
  });

  it('fails a wrong password as a store failure naming the secret, never a password, after reading the secret once more', async () => {
    // Prepare
    const wrong = `wrong-${randomUUID()}`;
    const secretId = storeSecret(wrong);
    const log = recordingLogger();
    const guard = guardWithSecret(secretId, log);
    const work = countedWork();
    // Act
    const error = await guard.run(message('m-1'), work.run, REMAINING_MS).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    // Assess
    expect(error?.name).toBe('IdempotencyStoreError');
    expect(error?.message).toContain(`(password from secret ${secretId})`);
    expect(error?.message).toContain(
      `the Redis server refused the login with the password of secret ${secretId}, also after reading the secret again (WRONGPASS`,
    );
    for (const text of [error?.message, ...log.lines]) {
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(PASSWORD);
    }
    expect(work.runs).toBe(0);
    expect(reads(secretId)).toBe(2);
  });

  it('fails a missing secret as a store failure naming the secret, without running the work', async () => {
    // Prepare
    const secretId = `test/redis-missing-${randomUUID()}`;
    const guard = guardWithSecret(secretId);
    const work = countedWork();
    // Act
    const error = await guard.run(message('m-1'), work.run, REMAINING_MS).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    // Assess
    expect(error?.name).toBe('IdempotencyStoreError');
    expect(error?.message).toContain(`(password from secret ${secretId}) failed (ResourceNotFoundException`);
    expect(work.runs).toBe(0);
  });

  it('without a secret, says where the password of a server that asks for one belongs', async () => {
    // Prepare
    const guard = createIdempotencyGuard({ store: { kind: 'redis', url: server.url }, keyPrefix: `test-${randomUUID()}` }, { logger: recordingLogger().log });
    guards.push(guard);
    // Act
    const error = await guard.run(message('m-1'), countedWork().run, REMAINING_MS).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    // Assess
    expect(error?.name).toBe('IdempotencyStoreError');
    expect(error?.message).toContain('the Redis server refused the login (NOAUTH');
    expect(error?.message).toContain(
      'keep its password in a Secrets Manager secret and name it with IDEMPOTENCY_STORE_SECRET_ID (or idempotency.storeSecretId)',
    );
  });

  it('picks up a rotated password: the refused login reads the secret again, bypassing the cache', async () => {
    // Prepare: a guard logged in with the first password, then the password rotated (secret and server)
    const secretId = storeSecret(PASSWORD);
    const log = recordingLogger();
    const guard = guardWithSecret(secretId, log);
    expect(await guard.run(message('m-1'), countedWork().run, REMAINING_MS)).toBe('ran');
    const rotated = `rotated-${randomUUID()}`;
    endpoint.put(secretId, rotated);
    await server.admin.config('SET', 'requirepass', rotated);
    // The connection logged in before the rotation stays logged in: drop it, as a restart would.
    await server.admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    const work = countedWork();
    // Act
    const outcome = await guard.run(message('m-2'), work.run, REMAINING_MS);
    // Assess
    expect(outcome).toBe('ran');
    expect(work.runs).toBe(1);
    expect(reads(secretId)).toBe(2);
    const warnings = log.entries().filter((entry) => entry.level === 'warn');
    expect(warnings).toEqual([
      expect.objectContaining({ message: expect.stringContaining('the Redis server refused the login; reading the password secret again'), secretId }),
    ]);
    for (const line of log.lines) {
      expect(line).not.toContain(PASSWORD);
      expect(line).not.toContain(rotated);
    }
  });

  it('runs every message when the server drops its connection just before each command (a fresh connection, not an error)', async () => {
    // Prepare: ioredis can still say `ready` for a socket the server has just closed
    const secretId = storeSecret(PASSWORD);
    const guard = guardWithSecret(secretId);
    expect(await guard.run(message('m-0'), countedWork().run, REMAINING_MS)).toBe('ran');
    const work = countedWork();
    // Act
    const outcomes: string[] = [];
    for (let i = 1; i <= 30; i++) {
      await server.admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      outcomes.push(await guard.run(message(`m-${i}`), work.run, REMAINING_MS).then(String, (thrown: unknown) => (thrown as Error).message));
    }
    // Assess
    expect(outcomes).toEqual(Array.from({ length: 30 }, () => 'ran'));
    expect(work.runs).toBe(30);
  });
});
