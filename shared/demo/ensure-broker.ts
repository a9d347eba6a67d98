import { spawn, spawnSync } from 'node:child_process';
import { connectBroker } from '../amqp/connection.js';
import { BrokerConnectionError } from '../errors.js';
import { redactUrl } from '../observability/redact.js';

/** Whether an AMQP connection can be opened now. */
async function brokerAnswers(urls: readonly string[], timeoutMs: number): Promise<boolean> {
  try {
    const broker = await connectBroker({ urls, connectTimeoutMs: timeoutMs, connectionName: 'boomerang-local-probe' });
    await broker.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure a broker answers for the demo: when none does and the URL is local, starts the local
 * `rabbitmq-server` if it is installed; otherwise throws with exactly what to do.
 */
async function ensureBroker(urls: readonly string[], say: (line: string) => void): Promise<void> {
  if (await brokerAnswers(urls, 2000)) return;
  const where = urls.map(redactUrl).join(', ');
  const local = urls.every((u) => /@(127\.0\.0\.1|localhost)(:\d+)?(\/|$)/.test(u) || /^amqps?:\/\/(127\.0\.0\.1|localhost)/.test(u));
  if (!local) throw new BrokerConnectionError(`No broker answers at ${where}. Check AMQP_URL, or unset it to use a local RabbitMQ.`);
  if (spawnSync('sh', ['-c', 'command -v rabbitmq-server'], { stdio: 'ignore' }).status !== 0) {
    throw new BrokerConnectionError(
      `No broker answers at ${where} and rabbitmq-server is not installed. Install it (Debian/Ubuntu: sudo apt-get install rabbitmq-server), ` +
        'start it with "rabbitmq-server -detached", or point AMQP_URL at a running broker.',
    );
  }
  say('RabbitMQ is not running: starting it with "rabbitmq-server -detached" ...');
  spawn('rabbitmq-server', ['-detached'], { stdio: 'ignore', detached: true }).unref();
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (await brokerAnswers(urls, 2000)) {
      say('RabbitMQ is up.');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new BrokerConnectionError(`Started rabbitmq-server, but no broker answered at ${where} within 90 s; see /var/log/rabbitmq/.`);
}

export { ensureBroker };
