import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectManaged } from '../../shared/amqp/managed-connection.js';

/**
 * The tools' reconnecting connection (parked CLI, console, demo) on ports where no broker answers:
 * it must end with the explanation connectBroker gives, and never hang.
 */
const servers: (Server | HttpServer)[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) {
    (server as HttpServer).closeAllConnections?.();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listening<T extends Server | HttpServer>(server: T): Promise<number> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as { port: number }).port;
}

async function failureOf(port: number, connectTimeoutMs: number): Promise<Error & { reason?: string }> {
  const urls = [`amqp://guest:s3cret@127.0.0.1:${port}`];
  return connectManaged({ urls, connectTimeoutMs, connectionName: 'test-managed-connection' }).then(
    async (managed) => {
      await managed.close();
      throw new Error('connected, which should have failed');
    },
    (e: unknown) => e as Error,
  );
}

describe('connectManaged where no broker answers', () => {
  it('names an HTTP server at once', { timeout: 5000 }, async () => {
    // Prepare
    const port = await listening(createHttpServer((_req, res) => res.end('not AMQP')));
    // Act
    const error = await failureOf(port, 60_000);
    // Assess
    expect(error.name).toBe('BrokerConnectionError');
    expect(error.reason).toBe('not-amqp');
    expect(error.message).toContain(`an HTTP server answered on 127.0.0.1:${port}, not an AMQP broker`);
    expect(error.message).not.toContain('s3cret');
  });

  it('ends at CONNECT_TIMEOUT_MS on a server that accepts and stays silent', { timeout: 5000 }, async () => {
    // Prepare: it takes the connection and never writes a byte
    const port = await listening(createServer((socket) => void sockets.push(socket)));
    // Act
    const error = await failureOf(port, 500);
    // Assess
    expect(error.name).toBe('BrokerConnectionError');
    expect(error.message).toContain(`Cannot connect to amqp://guest:***@127.0.0.1:${port}`);
    expect(error.message).toMatch(/did not answer in time|no broker answered within 500 ms/);
    expect(error.message).not.toContain('undefined');
  });
});
