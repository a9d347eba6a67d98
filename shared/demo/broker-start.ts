/**
 * Whether the demo may start a local RabbitMQ after its probe failed. Pure: it reads the probe's
 * failure and the URLs, never the network. Only a refused connection (nothing listens) means "not
 * running": a refused login or vhost, a TLS or DNS failure, or a port that is not AMQP all mean a
 * broker (or something) answered, and starting a second one cannot help.
 */
import type { BrokerFailureReason } from '../errors.js';

/**
 * What to do about a failed probe: `report` the probe's own error (the words `invoke` gives),
 * say the URL is `not-local` (a broker elsewhere is not ours to start), or `start` the local one.
 */
type BrokerStartDecision = 'report' | 'not-local' | 'start';

/**
 * Decides from the `reason` of the probe's `BrokerConnectionError`.
 * @example decideBrokerStart('login-refused', ['amqp://guest:wrong@127.0.0.1:5672']) // 'report'
 * @example decideBrokerStart('refused', ['amqp://guest:guest@127.0.0.1:5672']) // 'start'
 */
function decideBrokerStart(reason: BrokerFailureReason | undefined, urls: readonly string[]): BrokerStartDecision {
  if (reason !== 'refused') return 'report';
  return urls.every(isLocalUrl) ? 'start' : 'not-local';
}

/** Whether an AMQP URL names this machine (127.0.0.1 or localhost), read as amqplib reads it. */
function isLocalUrl(url: string): boolean {
  try {
    return ['127.0.0.1', 'localhost'].includes(new URL(url).hostname);
  } catch {
    return false;
  }
}

export { decideBrokerStart };
