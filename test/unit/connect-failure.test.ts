import { describe, expect, it } from 'vitest';
import { amqplibTextFailure, explainConnectFailure, lostWhat } from '../../shared/amqp/connect-failure.js';

const PASSWORD = 's3cret-pw';

/** An error shaped as Node's net/tls or amqplib hands it to the connection manager. */
function failure(message: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), fields);
}

describe('explainConnectFailure', () => {
  it.each([
    {
      case: 'nothing listening',
      error: failure('connect ECONNREFUSED 10.0.0.5:5699', { code: 'ECONNREFUSED' }),
      url: `amqp://app:${PASSWORD}@10.0.0.5:5699`,
      expected: {
        reason: 'refused',
        final: false,
        explanation:
          'nothing listens on 10.0.0.5:5699 (ECONNREFUSED): is RabbitMQ running there? If so, check the port (AMQP_URL or AMQP_PORT; Amazon MQ listens on 5671, with amqps://)',
      },
    },
    {
      case: 'a host that does not resolve',
      error: failure('getaddrinfo ENOTFOUND mq.nowhere', { code: 'ENOTFOUND' }),
      url: `amqps://app:${PASSWORD}@mq.nowhere`,
      expected: {
        reason: 'unresolved',
        final: true,
        explanation: 'the host name mq.nowhere does not resolve (ENOTFOUND): check the host (AMQP_URL or AMQP_HOST)',
      },
    },
    {
      case: 'a certificate for another host',
      error: failure("Hostname/IP does not match certificate's altnames", {
        code: 'ERR_TLS_CERT_ALTNAME_INVALID',
        host: 'b-1.mq.example.com',
        cert: { subjectaltname: 'DNS:other.example' },
      }),
      url: `amqps://app:${PASSWORD}@b-1.mq.example.com:5671`,
      expected: {
        reason: 'tls-hostname',
        final: true,
        explanation:
          "the broker's TLS certificate does not match the host: connecting to b-1.mq.example.com, but the certificate is for DNS:other.example; connect with a host name the certificate names",
      },
    },
    ...['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'].map((code) => ({
      case: `an untrusted chain (${code})`,
      error: failure('unable to verify', { code }),
      url: `amqps://app:${PASSWORD}@mq:5671`,
      expected: {
        reason: 'tls-untrusted',
        final: true,
        explanation: `the broker's TLS certificate is not trusted (${code}): if a private CA signed it, give that CA's PEM file in NODE_EXTRA_CA_CERTS (certificate verification is always on)`,
      },
    })),
    {
      case: 'an expired certificate',
      error: failure('certificate has expired', { code: 'CERT_HAS_EXPIRED' }),
      url: `amqps://app:${PASSWORD}@mq:5671`,
      expected: { reason: 'tls-untrusted', final: true, explanation: "the broker's TLS certificate is not valid now (CERT_HAS_EXPIRED)" },
    },
    {
      case: 'amqps:// to a plain port',
      error: failure('wrong version number', { code: 'ERR_SSL_WRONG_VERSION_NUMBER' }),
      url: `amqps://app:${PASSWORD}@mq:5672`,
      expected: {
        reason: 'tls',
        final: true,
        explanation: "mq:5672 does not speak TLS (ERR_SSL_WRONG_VERSION_NUMBER): use amqp:// for a plain port, or the broker's TLS port (5671 on Amazon MQ)",
      },
    },
    {
      case: 'amqp:// to a TLS port',
      error: failure('Socket closed abruptly during opening handshake'),
      url: `amqp://app:${PASSWORD}@mq:5671`,
      expected: {
        reason: 'unreachable',
        final: false,
        explanation:
          'mq:5671 closed the connection during the AMQP handshake (Socket closed abruptly during opening handshake): if it is a TLS port, use amqps://',
      },
    },
    {
      case: 'a refused login',
      error: failure('Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused"'),
      url: `amqp://app%40eu:${PASSWORD}@mq`,
      expected: { reason: 'login-refused', final: true, explanation: 'the broker refused the login of user "app@eu": check the user name and password' },
    },
    {
      case: 'a refused vhost',
      error: failure('Expected ConnectionOpenOk; got <ConnectionClose channel:0>'),
      url: `amqp://app:${PASSWORD}@mq/prod%2Feu`,
      expected: {
        reason: 'vhost-refused',
        final: true,
        explanation:
          'the broker refused to open vhost "prod/eu" for user "app": the vhost does not exist, or the user has no permission on it (rabbitmqctl list_vhosts; rabbitmqctl list_permissions -p "prod/eu")',
      },
    },
    {
      case: 'an HTTP server on the port ("P/1." of "HTTP/1.1" read as a frame size)',
      error: failure('Frame size 1345270062 exceeds maxFrameSize 67108864'),
      url: `amqp://app:${PASSWORD}@mq:15672`,
      expected: {
        reason: 'not-amqp',
        final: true,
        explanation:
          'an HTTP server answered on mq:15672, not an AMQP broker: RabbitMQ takes AMQP on port 5672 (5671 with TLS, amqps://), and its management UI takes HTTP on 15672; check the port (AMQP_URL or AMQP_PORT)',
      },
    },
    {
      case: 'another protocol on the port ("-2.0" of "SSH-2.0")',
      error: failure('Frame size 758263344 exceeds maxFrameSize 67108864'),
      url: `amqp://app:${PASSWORD}@mq:22`,
      expected: {
        reason: 'not-amqp',
        final: true,
        explanation:
          'mq:22 answered in a protocol other than AMQP (amqplib: Frame size 758263344 exceeds maxFrameSize 67108864): RabbitMQ takes AMQP on port 5672 (5671 with TLS, amqps://), and its management UI takes HTTP on 15672; check the port (AMQP_URL or AMQP_PORT)',
      },
    },
    {
      case: 'the socket timeout',
      error: failure('connect ETIMEDOUT'),
      url: `amqp://app:${PASSWORD}@mq`,
      expected: { reason: 'timeout', final: false, explanation: 'mq:5672 did not answer in time (ETIMEDOUT)' },
    },
    {
      case: 'anything else, redacted',
      error: failure(`odd failure talking to amqp://app:${PASSWORD}@mq`),
      url: `amqp://app:${PASSWORD}@mq`,
      expected: { reason: 'unreachable', final: false, explanation: 'mq:5672: odd failure talking to amqp://app:***@mq' },
    },
  ])('explains $case', ({ error, url, expected }) => {
    // Act
    const explained = explainConnectFailure(error, url);
    // Assess
    expect(explained).toEqual(expected);
    expect(explained.explanation).not.toContain(PASSWORD);
  });
});

describe('amqplibTextFailure', () => {
  it.each([
    ['Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused"', 'login-refused'],
    ['Expected ConnectionOpenOk; got <ConnectionClose channel:0>', 'vhost-refused'],
    ['Socket closed abruptly during opening handshake', 'closed-in-handshake'],
    ['Frame size 1345270062 exceeds maxFrameSize 67108864', 'not-amqp'],
    ['connect ETIMEDOUT', 'connect-timeout'],
    ['Channel closed', 'channel-closed'],
    ['Connection closed (Error: read ECONNRESET)', 'connection-closed'],
    ['Channel closed by server: 404 (NOT-FOUND)', 'channel-closed'],
    ['something else entirely', undefined],
  ])('reads %j as %s', (message, expected) => {
    // Act
    const failure = amqplibTextFailure(message);
    // Assess
    expect(failure).toBe(expected);
  });
});

describe('lostWhat', () => {
  const withFields = (message: string, fields: Record<string, unknown>): Error => Object.assign(new Error(message), fields);
  it.each([
    ['our own error, its reason', withFields('The channel closed', { reason: 'channel-closed' }), 'channel-closed'],
    ['our own error, a lost connection', withFields('socket gone', { reason: 'connection-lost' }), 'connection-lost'],
    ["a broker's channel close (it carries a classId)", withFields('Channel closed by server: 406 (PRECONDITION-FAILED)', { classId: 60 }), 'channel-closed'],
    ["amqplib's text only", new Error('Channel closed'), 'channel-closed'],
    ['anything else', new Error('Connection closed (Error: read ECONNRESET)'), 'connection-lost'],
  ])('%s: %s', (_, error, expected) => {
    expect(lostWhat(error)).toBe(expected);
  });
});
