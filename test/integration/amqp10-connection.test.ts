import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { describe, expect, it } from 'vitest';
import { parseBrokerVersion } from '../../shared/core/mode-settings.js';
import type { BrokerConnectionError } from '../../shared/errors.js';
import { connectAmqp10 } from '../../shared/native/amqp10-connection.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { BrokerCtl } from '../helpers/broker-ctl.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

// The broker under test, asked over AMQP 0-9-1 (which every version speaks): CI runs this file on 3.10 and on 4.3.
const VERSION = BROKER_VERSION;
const { major = 0, minor = 0 } = parseBrokerVersion(VERSION) ?? {};
const NATIVE = NATIVE_BROKER;

/** AMQP_URL with another password or vhost. */
function variant(change: { password?: string; vhost?: string }): string {
  const url = new URL(AMQP_URL);
  if (change.password !== undefined) url.password = change.password;
  if (change.vhost !== undefined) url.pathname = `/${encodeURIComponent(change.vhost)}`;
  return url.toString();
}

async function refusal(urls: string[], connectTimeoutMs = 10_000): Promise<{ error: BrokerConnectionError; elapsedMs: number }> {
  const started = Date.now();
  const error = await connectAmqp10({ urls, connectTimeoutMs, connectionName: uniqueName('amqp10') }).then(
    () => expect.fail('connected'),
    (e: unknown) => e as BrokerConnectionError,
  );
  return { error, elapsedMs: Date.now() - started };
}

/** Closes our connection from the broker's side, found by its unique connection_name. */
async function closeFromBroker(connectionName: string): Promise<void> {
  const ctl = BrokerCtl.forUrl(AMQP_URL);
  const listed = await ctl.ctl(['--quiet', 'list_connections', '--no-table-headers', 'pid', 'client_properties']);
  const pid = listed
    .split('\n')
    .find((line) => line.includes(`"${connectionName}"`))
    ?.split('\t')[0];
  expect(pid, `connection ${connectionName} in list_connections:\n${listed}`).toBeDefined();
  await ctl.ctl(['close_connection', pid as string, 'closed by amqp10-connection.test']);
}

describe.runIf(NATIVE)(`Function: connectAmqp10 on RabbitMQ ${VERSION}`, () => {
  it('opens a connection and reports the broker version and the endpoint without its password', async () => {
    // Act
    const broker = await connectAmqp10({ urls: [AMQP_URL], connectTimeoutMs: 5000, connectionName: uniqueName('amqp10') });

    // Assess
    try {
      expect(broker.connection.is_open()).toBe(true);
      expect(broker.brokerVersion).toBe(VERSION);
      expect(broker.brokerVersion?.startsWith(`${major}.${minor}`)).toBe(true);
      expect(broker.endpoint).toBe(AMQP_URL.replace(/:[^:@/]*@/, ':***@'));
    } finally {
      await broker.close();
    }
  });

  it('moves on to the next endpoint when the first refuses the connection', async () => {
    // Prepare
    const nothing = 'amqp://guest:guest@127.0.0.1:1';

    // Act
    const broker = await connectAmqp10({ urls: [nothing, AMQP_URL], connectTimeoutMs: 5000, connectionName: uniqueName('amqp10') });

    // Assess
    await broker.close();
    expect(broker.endpoint).toBe(AMQP_URL.replace(/:[^:@/]*@/, ':***@'));
  });

  it('gives login-refused for a wrong password, without waiting out the timeout', async () => {
    // Act
    const { error, elapsedMs } = await refusal([variant({ password: 'not-the-password' })]);

    // Assess (RabbitMQ 4.3 answers a failed SASL login after 3 s; connecting again cannot help)
    expect(error.name).toBe('BrokerConnectionError');
    expect(error.reason).toBe('login-refused');
    expect(error.message).toMatch(/refused the login of user "guest"/);
    expect(error.message).not.toContain('not-the-password');
    expect(elapsedMs).toBeLessThan(6000);
  });

  it('gives vhost-refused for a vhost that does not exist', async () => {
    // Act
    const vhost = uniqueName('vhost');
    const { error, elapsedMs } = await refusal([variant({ vhost })]);

    // Assess (RabbitMQ 4.3 sends no close frame: it drops the socket 3 s after the open)
    expect(error.reason).toBe('vhost-refused');
    expect(error.message).toContain(`would not open vhost "${vhost}"`);
    expect(elapsedMs).toBeLessThan(6000);
  });

  it('resolves lost when the broker closes the connection, and closes quietly after', async () => {
    // Prepare
    const connectionName = uniqueName('amqp10-lost');
    const broker = await connectAmqp10({ urls: [AMQP_URL], connectTimeoutMs: 5000, connectionName });

    // Act
    await closeFromBroker(connectionName);
    const lost = await Promise.race([broker.lost, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5000))]);

    // Assess
    await broker.close();
    expect(lost?.name).toBe('BrokerConnectionError');
    expect((lost as BrokerConnectionError).reason).toBe('connection-lost');
    expect(lost?.message).toContain('closed by amqp10-connection.test');
  });

  it('resolves lost when the socket drops', async () => {
    // Prepare
    const proxy = await TcpProxy.start(Number(new URL(AMQP_URL).port || 5672));
    const broker = await connectAmqp10({ urls: [proxy.url(AMQP_URL)], connectTimeoutMs: 5000, connectionName: uniqueName('amqp10-cut') });

    // Act
    proxy.cutAll();
    const lost = await Promise.race([broker.lost, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5000))]);

    // Assess
    await broker.close();
    await proxy.close();
    expect((lost as BrokerConnectionError | undefined)?.reason).toBe('connection-lost');
  });

  it('closes idempotently, and lost never resolves for a connection closed on purpose', async () => {
    // Prepare
    const broker = await connectAmqp10({ urls: [AMQP_URL], connectTimeoutMs: 5000, connectionName: uniqueName('amqp10') });
    let lost = false;
    void broker.lost.then(() => (lost = true));

    // Act
    await Promise.all([broker.close(), broker.close()]);
    await broker.close();
    // What is asserted is an absence: time for lost to resolve, were the close taken for a drop.
    await new Promise((resolve) => setTimeout(resolve, 200));

    // Assess
    expect(broker.connection.is_open()).toBe(false);
    expect(lost).toBe(false);
  });
});

describe(`Function: connectAmqp10 against a silent endpoint (RabbitMQ ${VERSION} behind it)`, () => {
  it('gives timeout after connectTimeoutMs when nothing answers', async () => {
    // Prepare
    const proxy = await TcpProxy.start(Number(new URL(AMQP_URL).port || 5672));
    proxy.silence();

    // Act
    const { error, elapsedMs } = await refusal([proxy.url(AMQP_URL)], 1000);

    // Assess
    await proxy.close();
    expect(error.reason).toBe('timeout');
    expect(error.message).toContain('did not open an AMQP 1.0 connection within');
    expect(elapsedMs).toBeGreaterThanOrEqual(1000);
    expect(elapsedMs).toBeLessThan(2000);
  });
});

describe.runIf(major < 4)(`Function: connectAmqp10 on RabbitMQ ${VERSION} (no AMQP 1.0)`, () => {
  it('says the broker does not speak AMQP 1.0, at once', async () => {
    // Act
    const { error, elapsedMs } = await refusal([AMQP_URL]);

    // Assess
    expect(error.name).toBe('BrokerConnectionError');
    expect(error.message).toContain('does not speak AMQP 1.0 (it answered with AMQP 0-9-1)');
    expect(error.message).toContain("delayMode 'native' needs RabbitMQ 4.3 or later");
    expect(elapsedMs).toBeLessThan(2000);
  });
});
