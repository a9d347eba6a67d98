// One timed throughput run, in a fresh plain-node process (no loader, no source maps: as Lambda runs
// the bundle). argv[2] is a JSON object:
//   { who: 'boomerang' | 'raw' | 'rascal', mode: 'success' | 'retry', url, queue, messages, prefetch,
//     delayQueue, delayQueueArguments, module }
// Boomerang is the pull function from `module` (dist/bench/boomerang/index.mjs: createPullFunction of the
// public entry point, bundled like the Lambda bundles), configured from the environment
// as the deployed function is; the others are the anchors, written as a careful engineer would write
// them by hand, with nothing taken away:
// - raw success: consume with prefetch, call the (no-op) handler, ack each message;
// - raw retry: consume with prefetch, call the handler (it throws, as Boomerang's does), publish a copy
//   (persistent, mandatory, retry header + 1) to the same delay queue with a streamed confirm, ack the
//   original in its confirm callback (many in flight, never one awaited at a time);
// - rascal: Rascal 21's `forward` recovery to a TTL delay queue, set up as its README's advanced
//   example (a `delay` exchange, a queue with a queue-level TTL dead-lettering back), its defaults
//   (withDefaultConfig) otherwise.
// Each is timed from connect to the last message settled; Boomerang's whole invocation (connect and
// close included, MAX_MESSAGES = N so it stops on the last one). Prints one JSON line: { ms, detail }.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const run = JSON.parse(process.argv[2]);
const require = createRequire(import.meta.url);
const amqp = require('amqplib');

const noop = () => undefined;
const failing = () => {
  throw new Error('partner down');
};
const handler = run.mode === 'retry' ? failing : noop;

// A quorum queue may ignore acks that arrive right before a channel close (rabbitmq-server#10327,
// seen on 3.10.8): cancel first, whose cancel-ok covers the acks sent before it. Boomerang does the same.
async function closeAfterAcks(connection, channel, consumerTag) {
  await channel.cancel(consumerTag);
  await channel.close();
  await connection.close();
}

async function boomerang() {
  const { createPullFunction } = await import(pathToFileURL(run.module).href);
  const invoke = createPullFunction(handler);
  const startedAt = performance.now();
  const summary = await invoke({}, { awsRequestId: 'bench', getRemainingTimeInMillis: () => 600_000 });
  const ms = performance.now() - startedAt;
  const settled = run.mode === 'retry' ? summary.retried : summary.acked;
  if (settled !== run.messages) throw new Error(`boomerang settled ${settled} of ${run.messages}: ${JSON.stringify(summary)}`);
  return { ms, detail: summary };
}

async function raw() {
  const startedAt = performance.now();
  const connection = await amqp.connect(run.url, { noDelay: true });
  const channel = run.mode === 'retry' ? await connection.createConfirmChannel() : await connection.createChannel();
  await channel.prefetch(run.prefetch);
  let settled = 0;
  let consumerTag = '';
  await new Promise((resolve, reject) => {
    channel.on('error', reject);
    const onMessage = (message) => {
      if (message === null) return reject(new Error('consumer cancelled'));
      try {
        handler(message);
      } catch {
        const { properties } = message;
        const headers = { ...properties.headers, 'x-retry-no': Number(properties.headers?.['x-retry-no'] ?? 0) + 1 };
        const options = { persistent: true, mandatory: true, headers, messageId: properties.messageId, contentType: properties.contentType };
        channel.publish('', run.delayQueue, message.content, options, (error) => {
          if (error) return channel.nack(message, false, true);
          channel.ack(message);
          if (++settled === run.messages) resolve();
        });
        return;
      }
      channel.ack(message);
      if (++settled === run.messages) resolve();
    };
    channel.consume(run.queue, onMessage).then((ok) => (consumerTag = ok.consumerTag), reject);
  });
  await closeAfterAcks(connection, channel, consumerTag);
  return { ms: performance.now() - startedAt, detail: { settled } };
}

async function rascal() {
  const { BrokerAsPromised, withDefaultConfig } = require('rascal');
  const delayQueue = `${run.queue}.rascal-delay`;
  const delayExchange = `${run.queue}.rascal-delay-x`;
  const config = {
    vhosts: {
      '/': {
        connection: { url: run.url, socketOptions: { noDelay: true } },
        exchanges: { [delayExchange]: { type: 'direct' } },
        queues: {
          // The work queue exists (Boomerang's topology declared it): check it, do not redeclare it.
          [run.queue]: { assert: false, check: true },
          [delayQueue]: { options: { durable: true, arguments: run.delayQueueArguments } },
        },
        bindings: { delay: { source: delayExchange, destination: delayQueue, bindingKey: 'later' } },
        publications: { retry_later: { exchange: delayExchange, routingKey: 'later' } },
        subscriptions: { work: { queue: run.queue, prefetch: run.prefetch } },
      },
    },
  };
  const startedAt = performance.now();
  const broker = await BrokerAsPromised.create(withDefaultConfig(config));
  let failure;
  broker.on('error', (error) => (failure ??= error));
  const subscription = await broker.subscribe('work');
  let settled = 0;
  const ms = await new Promise((resolve, reject) => {
    subscription.on('error', reject);
    subscription.on('message', (message, content, ackOrNack) => {
      try {
        handler(message);
      } catch (error) {
        ackOrNack(error, { strategy: 'forward', publication: 'retry_later' }, (err) => {
          if (err) failure ??= err;
          if (++settled === run.messages) resolve(performance.now() - startedAt);
        });
      }
    });
  });
  await subscription.cancel();
  await broker.shutdown();
  if (failure) throw failure;
  return { ms, detail: { settled, delayQueue, delayExchange } };
}

const contestants = { boomerang, raw, rascal };
try {
  // CPU used by this client process over the run (connect included): per message, it is far less
  // noisy than the wall clock on a shared machine, and it is what the client leaves to the broker.
  const cpuBefore = process.cpuUsage();
  const result = await contestants[run.who]();
  const cpu = process.cpuUsage(cpuBefore);
  // Then exit: a warm container's idempotency store client (idempotency section) stays open, as in Lambda.
  process.stdout.write(`${JSON.stringify({ ...result, cpuMicrosPerMessage: (cpu.user + cpu.system) / run.messages })}\n`, () => process.exit());
} catch (error) {
  process.stderr.write(`${error.stack ?? error}\n`, () => process.exit(1));
}
