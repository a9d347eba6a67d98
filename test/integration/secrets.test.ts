import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { connectFromConfig } from '../../shared/amqp/connect-from-config.js';
import { type Config, loadConfig } from '../../shared/config/config.js';
import { runEvent } from '../../shared/event/run-event.js';
import { SecretFetchError } from '../../shared/errors.js';
import { powertoolsSecretStore, type SecretStore } from '../../shared/amqp/secrets.js';
import { redactUrl } from '../../shared/observability/redact.js';
import { eventFor, rmqMessage } from '../fixtures/events.js';
import { AMQP_URL, sleep } from '../helpers/broker.js';
import { BrokerCtl } from '../helpers/broker-ctl.js';
import { recordingLogger } from '../helpers/fakes.js';
import { SecretsEndpoint } from '../helpers/secrets-endpoint.js';

const brokerCtl = BrokerCtl.forUrl();
/** The broker under test: users are made on it, and the secret-based configs connect to it. */
const brokerAddress = new URL(AMQP_URL.split(',')[0] ?? AMQP_URL);
const brokerHost = brokerAddress.hostname;
const brokerPort = brokerAddress.port || '5672';

/**
 * A test that makes users: three or four rabbitmqctl calls, each a VM that boots (one took 17 s on
 * 4.3.6 on the busy 2-core machine, 5 s on 3.10.8).
 */
const CTL_TEST_TIMEOUT_MS = 120_000;

/** rabbitmqctl on the broker under test; it fails loudly when the broker is not there. */
async function rabbitmqctl(...args: string[]): Promise<void> {
  await brokerCtl.ctl(['--quiet', ...args]);
}

let endpoint: SecretsEndpoint;

/** A RabbitMQ user that exists for one test only (deleted when it finishes), with every permission on `/`. */
async function temporaryUser(password: string): Promise<string> {
  const user = `test-user-${randomUUID().slice(0, 8)}`;
  onTestFinished(() => rabbitmqctl('delete_user', user), CTL_TEST_TIMEOUT_MS);
  await rabbitmqctl('add_user', user, password);
  await rabbitmqctl('set_permissions', '-p', '/', user, '.*', '.*', '.*');
  return user;
}

/** A config that reads broker credentials from `secretId` for the broker under test, without TLS. */
function secretConfig(secretId: string): Config {
  return loadConfig({
    AMQP_SECRET_ID: secretId,
    AMQP_HOST: brokerHost,
    AMQP_PORT: brokerPort,
    AMQP_TLS: 'false',
    CONNECT_TIMEOUT_MS: '3000',
    WORK_QUEUE: `test-work-${randomUUID().slice(0, 8)}`,
  });
}

/** Stores `value` (as JSON) under a new secret id on the endpoint; returns the id. */
function storeSecret(value: Record<string, string>): string {
  const secretId = `test/${randomUUID()}`;
  endpoint.put(secretId, JSON.stringify(value));
  return secretId;
}

/** A fresh store (Powertools SecretsProvider over the real SDK) talking to the local endpoint. */
function endpointSecrets(maxAgeSeconds?: number): SecretStore {
  return powertoolsSecretStore({ clientConfig: endpoint.clientConfig, maxAgeSeconds });
}

/** How many times the endpoint was asked for `secretId` (tests run concurrently: count per secret). */
function fetches(secretId: string): number {
  return endpoint.requests.filter((request) => request.secretId === secretId).length;
}

/** Every place a password must never show: log lines, error messages, summaries. */
function expectNowhere(password: string, ...texts: string[]): void {
  for (const text of texts) expect(text).not.toContain(password);
  // Its URL-encoded form would be as bad.
  for (const text of texts) expect(text).not.toContain(encodeURIComponent(password));
}

beforeAll(async () => {
  endpoint = await SecretsEndpoint.start();
});

afterAll(async () => {
  await endpoint.close();
});

describe('powertoolsSecretStore against a local Secrets Manager endpoint', () => {
  it('reads a secret through Powertools and the real SDK (JSON 1.1, GetSecretValue)', async () => {
    // Prepare
    const secretId = storeSecret({ username: 'app', password: 's3cret' });
    // Act
    const value = await endpointSecrets().get(secretId);
    // Assess
    expect(value).toBe('{"username":"app","password":"s3cret"}');
    expect(endpoint.requests.filter((r) => r.secretId === secretId)).toEqual([{ target: 'secretsmanager.GetSecretValue', secretId }]);
  });

  it('turns ResourceNotFoundException into a SecretFetchError that is not retryable', async () => {
    // Act
    const reading = endpointSecrets().get('test/missing');
    // Assess
    await expect(reading).rejects.toBeInstanceOf(SecretFetchError);
    await expect(reading).rejects.toMatchObject({
      code: 'ResourceNotFoundException',
      retryable: false,
      message: expect.stringContaining('Cannot read secret test/missing'),
    });
  });

  it('reuses a value while it is younger than maxAgeSeconds, and fetches again once it is older', async () => {
    // Prepare
    const secretId = storeSecret({ url: 'amqp://a' });
    const secrets = endpointSecrets(1);
    // Act
    await secrets.get(secretId);
    await secrets.get(secretId);
    const withinAge = fetches(secretId);
    // Past maxAgeSeconds (1 s) on the wall clock, which is what the cache's age is measured on.
    await sleep(1100);
    await secrets.get(secretId);
    // Assess
    expect(withinAge).toBe(1);
    expect(fetches(secretId)).toBe(2);
  });

  it('fetches afresh when asked to refresh (the broker refused the cached password), and caches the new value', async () => {
    // Prepare
    const secretId = storeSecret({ url: 'amqp://old' });
    const secrets = endpointSecrets();
    await secrets.get(secretId);
    endpoint.put(secretId, '{"url":"amqp://rotated"}');
    // Act
    const cached = await secrets.get(secretId);
    const fresh = await secrets.get(secretId, { refresh: true });
    const after = await secrets.get(secretId);
    // Assess
    expect([cached, fresh, after]).toEqual(['{"url":"amqp://old"}', '{"url":"amqp://rotated"}', '{"url":"amqp://rotated"}']);
    expect(fetches(secretId)).toBe(2);
  });

  it('shares one fetch between concurrent reads, keeps one entry per secret id, and never reuses with maxAgeSeconds 0', async () => {
    // Prepare
    const [a, b] = [storeSecret({ url: 'amqp://a' }), storeSecret({ url: 'amqp://b' })];
    const secrets = endpointSecrets();
    const uncached = endpointSecrets(0);
    // Act
    const values = await Promise.all([secrets.get(a), secrets.get(a), secrets.get(b)]);
    await uncached.get(b);
    await uncached.get(b);
    // Assess
    expect(values).toEqual(['{"url":"amqp://a"}', '{"url":"amqp://a"}', '{"url":"amqp://b"}']);
    expect([fetches(a), fetches(b)]).toEqual([1, 3]);
  });

  it('does not cache a failed fetch: the secret created afterwards is read', async () => {
    // Prepare
    const secretId = `test/${randomUUID()}`;
    const secrets = endpointSecrets();
    await expect(secrets.get(secretId)).rejects.toBeInstanceOf(SecretFetchError);
    endpoint.put(secretId, '{"url":"amqp://late"}');
    // Act
    const value = await secrets.get(secretId);
    // Assess
    expect(value).toBe('{"url":"amqp://late"}');
  });
});

describe('connectFromConfig with AMQP_SECRET_ID on the real broker', { timeout: CTL_TEST_TIMEOUT_MS }, () => {
  it('connects with a username/password secret whose password needs encoding', async () => {
    // Prepare
    const password = `pä@ss/w:rd%,#?x-${randomUUID().slice(0, 6)}`;
    const user = await temporaryUser(password);
    const secretId = storeSecret({ username: user, password });
    // Act
    const broker = await connectFromConfig(secretConfig(secretId), { connectionName: 'test-secrets', secrets: endpointSecrets() });
    await broker.close();
    // Assess
    expect(broker.endpoint).toBe(`amqp://${user}:***@${brokerHost}:${brokerPort}/%2F`);
  });

  it('connects with a {"url"} secret', async () => {
    // Prepare
    const secretId = storeSecret({ url: AMQP_URL });
    // Act
    const broker = await connectFromConfig(secretConfig(secretId), { connectionName: 'test-secrets', secrets: endpointSecrets() });
    await broker.close();
    // Assess
    expect(broker.endpoint).toBe(redactUrl(AMQP_URL));
  });

  it('heals a rotated password: refused with the cached one, it reads the secret again and connects', async () => {
    // Prepare
    const oldPassword = `old-${randomUUID()}`;
    const newPassword = `new-${randomUUID()}`;
    const user = await temporaryUser(oldPassword);
    const secretId = storeSecret({ username: user, password: oldPassword });
    const secrets = endpointSecrets();
    await secrets.get(secretId);
    await rabbitmqctl('change_password', user, newPassword);
    endpoint.put(secretId, JSON.stringify({ username: user, password: newPassword }));
    const logger = recordingLogger();
    // Act
    const broker = await connectFromConfig(secretConfig(secretId), { connectionName: 'test-rotation', secrets, log: logger.log });
    await broker.close();
    // Assess
    expect(fetches(secretId)).toBe(2);
    expect(logger.entries()).toMatchObject([
      { level: 'warn', message: 'the broker refused the login; reading the secret again (rotated?) and retrying once', secretId },
    ]);
    expectNowhere(oldPassword, ...logger.lines);
    expectNowhere(newPassword, ...logger.lines);
  });

  it('fails after one retry when the fresh secret is refused too, naming neither password', async () => {
    // Prepare
    const password = `right-${randomUUID()}`;
    const wrong = `wrong-${randomUUID()}`;
    const user = await temporaryUser(password);
    const secretId = storeSecret({ username: user, password: wrong });
    const logger = recordingLogger();
    // Act
    const connecting = connectFromConfig(secretConfig(secretId), { connectionName: 'test-refused', secrets: endpointSecrets(), log: logger.log });
    // Assess
    const error = (await connecting.catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ name: 'BrokerConnectionError', message: expect.stringContaining('the broker refused the login') });
    expect(fetches(secretId)).toBe(2);
    expectNowhere(wrong, error.message, String(error.stack), ...logger.lines);
    expectNowhere(password, error.message, ...logger.lines);
  });

  it("keeps the password out of the event function's logs and summary", async () => {
    // Prepare
    const password = `event-pw-${randomUUID()}`;
    const user = await temporaryUser(password);
    const secretId = storeSecret({ username: user, password });
    const logger = recordingLogger();
    const config = secretConfig(secretId);
    const event = eventFor({ [config.workQueue]: [rmqMessage('{"n":1}', { messageId: 'm-1' })] });
    // Act
    const summary = await runEvent({ config, handler: () => undefined, event, budgetMs: 5000, log: logger.log, secrets: endpointSecrets() });
    // Assess
    expect(summary).toMatchObject({ received: 1, acked: 1 });
    expectNowhere(password, JSON.stringify(summary), ...logger.lines);
  });
});
