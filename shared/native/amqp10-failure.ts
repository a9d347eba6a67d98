/**
 * Why one AMQP 1.0 connection attempt failed, in words an operator can act on. Pure: it reads what
 * rhea and the socket reported. Socket and TLS failures are the amqplib path's (`explainConnectFailure`);
 * what differs is what the AMQP 1.0 handshake says, and how RabbitMQ 4.x refuses it.
 */
import { type ConnectFailure, explainConnectFailure } from '../amqp/connect-failure.js';
import { vhostOfUrl } from '../amqp/broker-endpoints.js';
import { redactText } from '../observability/redact.js';

/** What one attempt saw before it gave up. */
type Amqp10AttemptOutcome =
  /** rhea's `connection_error`: a refused SASL login, or a close frame before the open. */
  | { readonly kind: 'refused'; readonly error: { readonly message?: string; readonly condition?: string } }
  /** rhea's `protocol_error`: the peer answered the AMQP 1.0 header with another protocol's. */
  | { readonly kind: 'protocol'; readonly message: string }
  /** The socket closed or failed before the open frame came. */
  | { readonly kind: 'disconnected'; readonly error: unknown; readonly loginAccepted: boolean }
  | { readonly kind: 'timeout'; readonly waitedMs: number };

const NATIVE_NEEDS = "delayMode 'native' needs RabbitMQ 4.3 or later, where AMQP 1.0 is served on the AMQP port";

/**
 * Explains one failed attempt on `url` (whose password it never reads).
 * @example explainAmqp10Failure({ kind: 'protocol', message: 'Unsupported AMQP version: 0-9-1' }, 'amqp://app:pw@mq:5672')
 * // { reason: 'unreachable', final: true, explanation: 'mq:5672 does not speak AMQP 1.0 (it answered with AMQP 0-9-1): ...' }
 */
function explainAmqp10Failure(outcome: Amqp10AttemptOutcome, url: string): ConnectFailure {
  const { where, user } = endpointOf(url);
  switch (outcome.kind) {
    case 'refused':
      // rhea words a refused SASL outcome 'Failed to authenticate: <code>'; RabbitMQ 4.3 answers it after 3 s.
      if (/^Failed to authenticate/.test(outcome.error.message ?? '')) {
        return { reason: 'login-refused', final: true, explanation: `the broker refused the login of user "${user}": check the user name and password` };
      }
      return {
        reason: /vhost|virtual host/i.test(outcome.error.message ?? '') ? 'vhost-refused' : 'unreachable',
        final: true,
        explanation: `${where} closed the AMQP 1.0 connection while opening it: ${outcome.error.condition ?? 'no condition'}: ${redactText(outcome.error.message ?? '')}`,
      };
    case 'protocol': {
      // A RabbitMQ without AMQP 1.0 (3.x without the plugin) answers with its 0-9-1 header and closes.
      const version = /version: ([\d-]+)/.exec(outcome.message)?.[1];
      const answered = version === undefined ? redactText(outcome.message) : `it answered with AMQP ${version}`;
      return { reason: 'unreachable', final: true, explanation: `${where} does not speak AMQP 1.0 (${answered}): ${NATIVE_NEEDS}` };
    }
    case 'disconnected':
      // RabbitMQ 4.3 refuses a vhost (missing, or no permission) after the login by closing the socket 3 s
      // later without a close frame; only its log says why.
      if (outcome.loginAccepted) {
        const vhost = vhostOfUrl(url);
        return {
          reason: 'vhost-refused',
          final: true,
          explanation: `the broker accepted the login of user "${user}" but would not open vhost "${vhost}": it does not exist, or the user has no permission on it (rabbitmqctl list_permissions -p "${vhost}")`,
        };
      }
      return explainConnectFailure(outcome.error, url);
    case 'timeout':
      return { reason: 'timeout', final: false, explanation: `${where} did not open an AMQP 1.0 connection within ${outcome.waitedMs} ms` };
  }
}

/** Host:port and user of a URL, for messages; never the password. */
function endpointOf(url: string): { where: string; user: string } {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === 'amqps:' ? '5671' : '5672');
    return { where: `${parsed.hostname}:${port}`, user: parsed.username === '' ? 'guest' : unescape(parsed.username) };
  } catch {
    return { where: '?', user: '?' };
  }
}

export { explainAmqp10Failure };
export type { Amqp10AttemptOutcome };
