import { spawn, spawnSync } from 'node:child_process';
import { connectBroker } from '../amqp/connection.js';
import { BrokerConnectionError, type BrokerFailureReason } from '../errors.js';
import { redactUrl } from '../observability/redact.js';

/** Starts the local broker; the demo's is {@link rabbitmqServer}, tests pass a fake. */
interface BrokerStarter {
  /** Whether it can start one here at all. */
  installed(): boolean;
  /** Starts it in the background and returns at once. */
  start(): void;
}

/** The local `rabbitmq-server`, started detached. */
const rabbitmqServer: BrokerStarter = {
  installed: () => spawnSync('sh', ['-c', 'command -v rabbitmq-server'], { stdio: 'ignore' }).status === 0,
  start: () => spawn('rabbitmq-server', ['-detached'], { stdio: 'ignore', detached: true }).unref(),
};

/** How long a started broker gets to answer. */
const START_WAIT_MS = 90_000;

/** Opens and closes one AMQP connection: undefined when it opened, else why not. */
async function probe(urls: readonly string[]): Promise<BrokerConnectionError | undefined> {
  try {
    await (await connectBroker({ urls, connectTimeoutMs: 2000, connectionName: 'boomerang-local-probe' })).close();
    return undefined;
  } catch (error) {
    return error as BrokerConnectionError;
  }
}

/**
 * Makes sure a broker answers for the demo. Only when nothing listens (a refused connection) and the
 * URL is local does it start `starter`; any other failure (a refused login or vhost...) is thrown at
 * once with the explanation `invoke` gives.
 */
async function ensureBroker(urls: readonly string[], say: (line: string) => void, starter: BrokerStarter = rabbitmqServer): Promise<void> {
  const failure = await probe(urls);
  if (failure === undefined) return;
  const where = urls.map(redactUrl).join(', ');
  const decision = decideBrokerStart(failure.reason, urls);
  if (decision === 'report') throw failure;
  if (decision === 'not-local')
    throw new BrokerConnectionError(`No broker answers at ${where}. Check AMQP_URL, or unset it to use a local RabbitMQ.`, {
      cause: failure,
      reason: failure.reason,
    });
  if (!starter.installed()) {
    throw new BrokerConnectionError(
      `No broker answers at ${where} and rabbitmq-server is not installed. Install it (Debian/Ubuntu: sudo apt-get install rabbitmq-server), ` +
        'start it with "rabbitmq-server -detached", or point AMQP_URL at a running broker.',
      { cause: failure, reason: failure.reason },
    );
  }
  say('RabbitMQ is not running: starting it with "rabbitmq-server -detached" ...');
  starter.start();
  const deadline = Date.now() + START_WAIT_MS;
  while (Date.now() < deadline) {
    const again = await probe(urls);
    if (again === undefined) {
      say('RabbitMQ is up.');
      return;
    }
    // It answers now, and refuses: waiting longer would not change that.
    if (again.reason !== 'refused') throw again;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new BrokerConnectionError(`Started rabbitmq-server, but no broker answered at ${where} within ${START_WAIT_MS / 1000} s; see /var/log/rabbitmq/.`);
}

/**
 * What to do about a failed probe: `report` the probe's own error (the words `invoke` gives),
 * say the URL is `not-local` (a broker elsewhere is not ours to start), or `start` the local one.
 */
type BrokerStartDecision = 'report' | 'not-local' | 'start';

/**
 * Whether the demo may start a local RabbitMQ after its probe failed, from the `reason` of the probe's
 * `BrokerConnectionError`. Pure: it reads the probe's failure and the URLs, never the network. Only a
 * refused connection (nothing listens) means "not running": a refused login or vhost, a TLS or DNS
 * failure, or a port that is not AMQP all mean a broker (or something) answered, and starting a
 * second one cannot help.
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

export { decideBrokerStart, ensureBroker };
export type { BrokerStarter };
