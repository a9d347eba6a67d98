import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Folders laid out as rabbit-node.sh's RABBIT_TLS_DIR wants them: ca.pem, server.pem, server-key.pem. */
type TestCertificates = {
  /** The test CA's certificate: what NODE_EXTRA_CA_CERTS names to trust the broker. */
  readonly caFile: string;
  /** A server certificate for IP 127.0.0.1 and DNS localhost, signed by the test CA. */
  readonly localDir: string;
  /** A server certificate for DNS other.example only, signed by the same CA. */
  readonly otherHostDir: string;
  /** The certificate of a second CA, which signed nothing the broker presents. */
  readonly strangerCaFile: string;
  /** Deletes every file (keys included). */
  remove(): void;
};

/**
 * Makes a throw-away CA and server certificates with the openssl command, valid for two days. Keys
 * are unencrypted: they live in a temp folder that `remove()` deletes.
 */
function makeTestCertificates(): TestCertificates {
  const root = mkdtempSync(join(tmpdir(), 'boomerang-tls-'));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  const makeCa = (name: string) => {
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=Boomerang test ${name}`,
      '-keyout',
      `${name}-key.pem`,
      '-out',
      `${name}.pem`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
    return join(root, `${name}.pem`);
  };
  const caFile = makeCa('ca');
  const serverIn = (dir: string, subjectAltName: string) => {
    const at = join(root, dir);
    mkdirSync(at);
    writeFileSync(join(at, 'ext.cnf'), `subjectAltName=${subjectAltName}\nextendedKeyUsage=serverAuth\n`);
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=boomerang test broker',
      '-keyout',
      join(at, 'server-key.pem'),
      '-out',
      join(at, 'server.csr'),
    );
    openssl(
      'x509',
      '-req',
      '-days',
      '2',
      '-in',
      join(at, 'server.csr'),
      '-CA',
      caFile,
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-extfile',
      join(at, 'ext.cnf'),
      '-out',
      join(at, 'server.pem'),
    );
    execFileSync('cp', [caFile, join(at, 'ca.pem')]);
    return at;
  };
  return {
    caFile,
    localDir: serverIn('local', 'IP:127.0.0.1,DNS:localhost'),
    otherHostDir: serverIn('other-host', 'DNS:other.example'),
    strangerCaFile: makeCa('stranger-ca'),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

export { makeTestCertificates };
export type { TestCertificates };
