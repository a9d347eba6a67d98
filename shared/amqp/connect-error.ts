/**
 * The one error both connectors (plain amqplib for an invocation, amqp-connection-manager for the
 * tools) give for a connect that failed, so `invoke`, the parked CLI, the console and the demo say the
 * same words for the same misconfiguration.
 */
import { BrokerConnectionError } from '../errors.js';
import { redactText, redactUrl } from '../observability/redact.js';
import type { ConnectFailure } from './connect-failure.js';

/**
 * Whether every endpoint failed in a way another attempt cannot mend (login, vhost, TLS certificate,
 * not an AMQP port): waiting out the timeout would only delay the same answer.
 */
function everyFinal(urls: readonly string[], failures: ReadonlyMap<string, ConnectFailure>): boolean {
  return urls.every((u) => failures.get(u)?.final === true);
}

/**
 * The error for a connect that failed: each endpoint's last failure, or the timeout when none came.
 * @example connectError(['amqp://u:p@h:5672'], 5000, new Map([[url, loginRefused]]), cause)
 * // BrokerConnectionError('Cannot connect to amqp://u:***@h:5672: the broker refused the login of user "u": ...')
 */
function connectError(
  urls: readonly string[],
  connectTimeoutMs: number,
  failures: ReadonlyMap<string, ConnectFailure>,
  lastError: unknown,
): BrokerConnectionError {
  const tried = urls.filter((u) => failures.has(u));
  if (tried.length === 0) {
    const timeout = `no broker answered within ${connectTimeoutMs} ms (CONNECT_TIMEOUT_MS): is RabbitMQ running and reachable?`;
    const last = lastError === undefined ? '' : ` (last error: ${redactText(String((lastError as Error).message ?? lastError))})`;
    return new BrokerConnectionError(`Cannot connect to ${urls.map(redactUrl).join(', ')}: ${timeout}${last}`, {
      reason: 'timeout',
    });
  }
  const explained = tried.map((u) => ({ url: redactUrl(u), failure: failures.get(u) as ConnectFailure }));
  const gaveUp = explained.every((e) => e.failure.final) ? '' : ` (tried for ${connectTimeoutMs} ms, CONNECT_TIMEOUT_MS)`;
  const message =
    explained.length === 1 && urls.length === 1
      ? `Cannot connect to ${explained[0]?.url}: ${explained[0]?.failure.explanation}${gaveUp}`
      : `Cannot connect to any of ${urls.length} endpoints${gaveUp}: ${explained.map((e) => `${e.url}: ${e.failure.explanation}`).join('; ')}`;
  return new BrokerConnectionError(message, { reason: explained[0]?.failure.reason });
}

export { connectError, everyFinal };
