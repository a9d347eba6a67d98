/**
 * What one failed connection attempt means, in words an operator can act on. Pure: it reads the
 * error amqplib (or Node's net/tls) gave and the URL that was tried, never the network. Nothing it
 * returns holds a password: the URL's password is never read, and free texts go through redactText.
 *
 * The failures amqplib reports only as text are read here, in this one place (`amqplibTextFailure`,
 * which pull also asks about a closed channel). Everything else is classified by typed fields:
 * amqplib's `code` (the broker's reply code) with `classId`/`methodId` on a channel close, Node's
 * socket `code`, and the `reason` of our own errors.
 */
import type { BrokerFailureReason } from '../errors.js';
import { redactText } from '../observability/redact.js';
import { vhostOfUrl } from './broker-endpoints.js';

/** One attempt's failure, explained. */
type ConnectFailure = {
  readonly reason: BrokerFailureReason;
  /** Trying the same URL again within this invocation cannot help (a misconfiguration, not a blip). */
  readonly final: boolean;
  readonly explanation: string;
};

// Node's names for a chain that does not end at a trusted CA.
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);
const NOT_TLS = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'EPROTO']);
const TRUST_HINT = "if a private CA signed it, give that CA's PEM file in NODE_EXTRA_CA_CERTS (certificate verification is always on)";

/**
 * Explains why connecting to `url` failed.
 * @example explainConnectFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5699'), { code: 'ECONNREFUSED' }), 'amqp://u:p@127.0.0.1:5699')
 * // { reason: 'refused', final: false, explanation: 'nothing listens on 127.0.0.1:5699 (ECONNREFUSED): ...' }
 */
function explainConnectFailure(error: unknown, url: string): ConnectFailure {
  const err = (error ?? {}) as { code?: unknown; message?: unknown; host?: unknown; cert?: { subjectaltname?: unknown } };
  const code = typeof err.code === 'string' ? err.code : '';
  const message = redactText(String(err.message ?? error));
  const { host, port, tls, user } = endpointOf(url);
  const where = `${host}:${port}`;
  if (code === 'ECONNREFUSED') {
    return {
      reason: 'refused',
      final: false,
      explanation: `nothing listens on ${where} (ECONNREFUSED): is RabbitMQ running there? If so, check the port (AMQP_URL or AMQP_PORT; Amazon MQ listens on 5671, with amqps://)`,
    };
  }
  if (code === 'ENOTFOUND')
    return { reason: 'unresolved', final: true, explanation: `the host name ${host} does not resolve (ENOTFOUND): check the host (AMQP_URL or AMQP_HOST)` };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = typeof err.cert?.subjectaltname === 'string' ? err.cert.subjectaltname : 'no subject alternative names';
    return {
      reason: 'tls-hostname',
      final: true,
      explanation: `the broker's TLS certificate does not match the host: connecting to ${host}, but the certificate is for ${names}; connect with a host name the certificate names`,
    };
  }
  if (UNTRUSTED.has(code)) return { reason: 'tls-untrusted', final: true, explanation: `the broker's TLS certificate is not trusted (${code}): ${TRUST_HINT}` };
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return { reason: 'tls-untrusted', final: true, explanation: `the broker's TLS certificate is not valid now (${code})` };
  if (tls && NOT_TLS.has(code))
    return {
      reason: 'tls',
      final: true,
      explanation: `${where} does not speak TLS (${code}): use amqp:// for a plain port, or the broker's TLS port (5671 on Amazon MQ)`,
    };
  const text = amqplibTextFailure(message);
  if (text === 'login-refused') {
    return { reason: 'login-refused', final: true, explanation: `the broker refused the login of user "${user}": check the user name and password` };
  }
  // The broker answers connection.open with connection.close for an unknown vhost, or one the user has no permission on.
  if (text === 'vhost-refused') {
    const vhost = vhostOfUrl(url);
    return {
      reason: 'vhost-refused',
      final: true,
      explanation: `the broker refused to open vhost "${vhost}" for user "${user}": the vhost does not exist, or the user has no permission on it (rabbitmqctl list_vhosts; rabbitmqctl list_permissions -p "${vhost}")`,
    };
  }
  if (text === 'not-amqp') return { reason: 'not-amqp', final: true, explanation: notAmqpExplanation(where, message) };
  if (!tls && (code === 'ECONNRESET' || text === 'closed-in-handshake')) {
    return {
      reason: 'unreachable',
      final: false,
      explanation: `${where} closed the connection during the AMQP handshake (${code || message}): if it is a TLS port, use amqps://`,
    };
  }
  if (code === 'ETIMEDOUT' || text === 'connect-timeout')
    return { reason: 'timeout', final: false, explanation: `${where} did not answer in time (ETIMEDOUT)` };
  return { reason: 'unreachable', final: false, explanation: `${where}: ${message}` };
}

// amqplib reads the first 7 bytes of the answer as a frame header (type, channel, 4-byte size): from
// an HTTP server's "HTTP/1.1 400 Bad Request" the size is the bytes "P/1.", 0x502F312E.
const HTTP_FRAME_SIZE = /^Frame size 1345270062 /;
const AMQP_PORTS = 'RabbitMQ takes AMQP on port 5672 (5671 with TLS, amqps://), and its management UI takes HTTP on 15672';

/** A server that answered the AMQP header in another protocol: an HTTP server named as such. */
function notAmqpExplanation(where: string, message: string): string {
  if (HTTP_FRAME_SIZE.test(message)) return `an HTTP server answered on ${where}, not an AMQP broker: ${AMQP_PORTS}; check the port (AMQP_URL or AMQP_PORT)`;
  return `${where} answered in a protocol other than AMQP (amqplib: ${message}): ${AMQP_PORTS}; check the port (AMQP_URL or AMQP_PORT)`;
}

/** Host, port, scheme and user of an AMQP URL as amqplib reads them; never the password. */
function endpointOf(url: string): { host: string; port: string; tls: boolean; user: string } {
  try {
    const parsed = new URL(url);
    const tls = parsed.protocol === 'amqps:';
    return { host: parsed.hostname, port: parsed.port || (tls ? '5671' : '5672'), tls, user: safeDecode(parsed.username) || 'guest' };
  } catch {
    // config.ts has checked the scheme; a URL that still does not parse has nothing more to show.
    return { host: '?', port: '?', tls: /^amqps:/i.test(url), user: '?' };
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** What a text-only amqplib failure was. */
type AmqplibTextFailure = 'login-refused' | 'vhost-refused' | 'closed-in-handshake' | 'not-amqp' | 'connect-timeout' | 'channel-closed' | 'connection-closed';

// amqplib gives only text for these: a connection.close during the handshake is formatted into the
// message (a refused login: "403 (ACCESS-REFUSED)"; a refused vhost: the reply to connection.open is
// dropped, leaving "Expected ConnectionOpenOk; got <ConnectionClose"), its own connect timeout is a
// plain Error('connect ETIMEDOUT'), a server that answers in another protocol shows as a frame too
// large (amqplib reads its first bytes as a frame header), and IllegalOperationError is one class for an operation on a
// closed channel and on a closed connection ("Channel closed", "Connection closed (...)").
const TEXT_FAILURES: ReadonlyArray<readonly [RegExp, AmqplibTextFailure]> = [
  [/ACCESS-REFUSED|\b403\b/, 'login-refused'],
  [/Expected ConnectionOpenOk; got <ConnectionClose/, 'vhost-refused'],
  [/closed abruptly during opening handshake/, 'closed-in-handshake'],
  [/^Frame size \d+ exceeds maxFrameSize/, 'not-amqp'],
  [/ETIMEDOUT/, 'connect-timeout'],
  [/^Channel closed/, 'channel-closed'],
  [/^Connection closed/, 'connection-closed'],
];

/**
 * What an amqplib error's text says it was; undefined when it says none of these.
 * @example amqplibTextFailure('Handshake terminated by server: 403 (ACCESS-REFUSED) with message "..."') // 'login-refused'
 */
function amqplibTextFailure(message: string): AmqplibTextFailure | undefined {
  for (const [pattern, failure] of TEXT_FAILURES) if (pattern.test(message)) return failure;
  return undefined;
}

/**
 * Whether the channel or the connection was lost, by typed fields: our own error's `reason`, else the
 * `classId` a broker's channel close carries (a connection close has none), else amqplib's text.
 */
function lostWhat(error: Error): 'channel-closed' | 'connection-lost' {
  const { reason, classId } = error as { reason?: unknown; classId?: unknown };
  if (reason === 'channel-closed' || reason === 'connection-lost') return reason;
  if (typeof classId === 'number' || amqplibTextFailure(error.message) === 'channel-closed') return 'channel-closed';
  return 'connection-lost';
}

export { amqplibTextFailure, explainConnectFailure, lostWhat };
export type { ConnectFailure };
