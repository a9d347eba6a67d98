import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import type { BrokerConnectionError } from '../../shared/errors.js';
import { connectAmqp10 } from '../../shared/native/amqp10-connection.js';
import { makeTestCertificates } from '../helpers/test-certificates.js';

const certificates = makeTestCertificates();

describe('Function: connectAmqp10 over amqps://', () => {
  afterAll(() => certificates.remove());

  it('verifies the certificate: a server whose CA Node does not trust gives tls-untrusted', async () => {
    // Prepare (a TLS server on this machine, certificate for 127.0.0.1 from a CA nobody trusts)
    const server = createServer({
      cert: readFileSync(join(certificates.localDir, 'server.pem')),
      key: readFileSync(join(certificates.localDir, 'server-key.pem')),
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;

    // Act
    const error = await connectAmqp10({ urls: [`amqps://guest:guest@127.0.0.1:${port}`], connectTimeoutMs: 3000, connectionName: 'test-tls' }).then(
      () => expect.fail('connected'),
      (e: unknown) => e as BrokerConnectionError,
    );

    // Assess
    await new Promise((resolve) => server.close(resolve));
    expect(error.reason).toBe('tls-untrusted');
    expect(error.message).toContain('NODE_EXTRA_CA_CERTS');
  });
});
