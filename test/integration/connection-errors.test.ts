import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { connectBroker } from '../../shared/amqp/connection.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';

/**
 * A wrong vhost, port, password or scheme in AMQP_URL used to end, for most of them, as "no broker
 * answered within 5000 ms": the error must say what the broker (or the socket) actually answered,
 * and never the password.
 */
const PASSWORD = new URL(AMQP_URL).password;

/** AMQP_URL with some parts changed. */
function variantOf(changes: { protocol?: string; port?: number; password?: string; vhost?: string }): string {
  const url = new URL(AMQP_URL);
  if (changes.port !== undefined) url.port = String(changes.port);
  if (changes.password !== undefined) url.password = changes.password;
  if (changes.vhost !== undefined) url.pathname = `/${encodeURIComponent(changes.vhost)}`;
  // WHATWG URL will not switch a special scheme; amqp is not one, so a string swap is exact.
  return changes.protocol === undefined ? url.toString() : url.toString().replace(/^amqps?:/, changes.protocol);
}

/** A local port nobody listens on: the OS gave it to us, then we closed it. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

async function failureOf(url: string | string[], connectTimeoutMs = 20_000): Promise<Error & { reason?: string }> {
  const error = await connectBroker({ urls: [url].flat(), connectTimeoutMs, connectionName: 'test-connection-errors' }).then(
    async (broker) => {
      await broker.close();
      throw new Error(`connected to ${broker.endpoint}, which should have failed`);
    },
    (e: unknown) => e as Error,
  );
  expect(error.name).toBe('BrokerConnectionError');
  expect(error.message).not.toContain(`:${PASSWORD}@`);
  return error;
}

describe('connectBroker on a misconfigured URL', () => {
  it('names a vhost that does not exist, and gives up without waiting for the timeout', async () => {
    // Prepare
    const vhost = uniqueName('no-such-vhost');
    // Act
    const error = await failureOf(variantOf({ vhost }));
    // Assess
    expect(error.reason).toBe('vhost-refused');
    expect(error.message).toContain(`the broker refused to open vhost "${vhost}" for user "guest"`);
    expect(error.message).not.toMatch(/no broker answered|tried for/);
  });

  it('names every endpoint and what each answered when all of them refuse for good', async () => {
    // Prepare
    const vhosts = [uniqueName('no-such-vhost'), uniqueName('no-such-vhost')];
    // Act
    const error = await failureOf(vhosts.map((vhost) => variantOf({ vhost })));
    // Assess
    expect(error.reason).toBe('vhost-refused');
    expect(error.message).toMatch(/^Cannot connect to any of 2 endpoints: /);
    for (const vhost of vhosts) expect(error.message).toContain(`/${vhost}: the broker refused to open vhost "${vhost}"`);
    expect(error.message).not.toMatch(/no broker answered|tried for/);
  });

  it('says nothing listens on the port, and where Amazon MQ listens', async () => {
    // Prepare
    const port = await freePort();
    // Act
    const error = await failureOf(variantOf({ port }), 1000);
    // Assess
    expect(error.reason).toBe('refused');
    expect(error.message).toContain(
      `nothing listens on 127.0.0.1:${port} (ECONNREFUSED): is RabbitMQ running there? If so, check the port (AMQP_URL or AMQP_PORT; Amazon MQ listens on 5671, with amqps://)`,
    );
    expect(error.message).not.toContain('no broker answered');
  });

  it('names the user of a refused login, never the password', async () => {
    // Prepare
    const wrong = `wrong-${uniqueName('pw')}`;
    // Act
    const error = await failureOf(variantOf({ password: wrong }));
    // Assess
    expect(error.reason).toBe('login-refused');
    expect(error.message).toContain('the broker refused the login of user "guest": check the user name and password');
    expect(error.message).not.toContain(wrong);
  });

  it('says a plain AMQP port does not speak TLS when given amqps://', async () => {
    // Act
    const error = await failureOf(variantOf({ protocol: 'amqps:' }));
    // Assess
    expect(error.reason).toBe('tls');
    expect(error.message).toContain(`${new URL(AMQP_URL).hostname}:${new URL(AMQP_URL).port || 5672} does not speak TLS`);
  });

  it('says an HTTP server answered, and which ports AMQP and the management UI use', { timeout: 5000 }, async () => {
    // Prepare: what answers on 15672 when the management plugin runs
    const http = createHttpServer((_req, res) => res.end('RabbitMQ Management')).listen(0, '127.0.0.1');
    await once(http, 'listening');
    const { port } = http.address() as { port: number };
    try {
      // Act
      const error = await failureOf(variantOf({ port }));
      // Assess
      expect(error.reason).toBe('not-amqp');
      expect(error.message).toContain(
        `an HTTP server answered on 127.0.0.1:${port}, not an AMQP broker: RabbitMQ takes AMQP on port 5672 (5671 with TLS, amqps://)`,
      );
      expect(error.message).not.toMatch(/Frame size|tried for/);
    } finally {
      http.close();
      http.closeAllConnections();
    }
  });
});
