import { randomUUID } from 'node:crypto';
import { createPullFunction } from '../../functions/pull.js';
import { createWebhookDelivery } from '../../functions/webhook-delivery.js';
import { connectBroker } from '../amqp/connection.js';
import { loadConfig, topologyOptionsFromConfig } from '../config.js';
import { ensureBroker } from '../demo/ensure-broker.js';
import { startFlakyProvider } from '../demo/flaky-provider.js';
import { StatusLine } from '../demo/status-line.js';
import { createLogger, logLevelFrom } from '../logger.js';
import { PullAbortedError } from '../pull.js';
import { emptySummary, SUMMARY_COUNTS, type Summary } from '../summary.js';
import { applyTopology } from '../topology/apply.js';
import { buildTopologyPlan } from '../topology/plan.js';
import { intFlag, parseCli, runCli } from './args.js';

const USAGE = `Usage: npm run local [-- --messages <n>] [--failure-rate <0..1>] [--interval-ms <n>]

The whole job end to end on this machine: makes sure RabbitMQ runs (starts a local rabbitmq-server
if it is installed), resets and applies the demo topology (work queue boomerang.demo, its delay
queues and parking lot), starts a flaky local HTTP provider, publishes webhook messages to it, and
invokes the pull function every couple of seconds as a scheduler would, until everything settled.

  --messages <n>        how many webhook messages to publish (default 300)
  --failure-rate <r>    fraction of provider answers that fail transiently (default 0.4)
  --interval-ms <n>     time between invocations (default 2000)
  -h, --help            this text

Any variable of the function applies too (MAX_RETRIES, BACKOFF_INITIAL_MS, DELAY_MODE, QUEUE_TYPE...).`;

const DEMO_QUEUE = 'boomerang.demo';

async function main(): Promise<number> {
  const { values, positionals } = parseCli(process.argv.slice(2), {
    messages: { type: 'string' },
    'failure-rate': { type: 'string' },
    'interval-ms': { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const messages = intFlag('messages', values.messages, 1, 100_000) ?? 300;
  const intervalMs = intFlag('interval-ms', values['interval-ms'], 100, 60_000) ?? 2000;
  const failureRate = Number(values['failure-rate'] ?? '0.4');
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  // Demo-sized defaults: 4 retries of 1, 2, 4, 8 s; the user's environment still wins.
  const config = loadConfig({ MAX_RETRIES: '4', BACKOFF_INITIAL_MS: '1000', IDLE_TIMEOUT_MS: '300', SAFETY_MARGIN_MS: '2000', ...process.env, WORK_QUEUE: DEMO_QUEUE });
  const log = createLogger({ level: logLevelFrom(process.env.LOG_LEVEL ?? 'error') });

  await ensureBroker(config.amqpUrls, say);
  const plan = buildTopologyPlan(topologyOptionsFromConfig(config));
  const delayQueues = plan.queues.filter((q) => q.role === 'delay').map((q) => q.name);
  const broker = await connectBroker({ urls: config.amqpUrls, connectTimeoutMs: config.connectTimeoutMs, connectionName: 'boomerang-local' });
  const provider = await startFlakyProvider({ failureRate, permanentFailureRate: 0.02, retryAfterSeconds: 3, latencyMs: 5 });
  try {
    // The demo owns these queues: start from empty ones so the counts below are the demo's own.
    const admin = await broker.connection.createChannel();
    // Exact mode's level and unroutable queues are shared by every work queue of the vhost: keep them.
    const demoOwned = plan.queues.filter((q) => q.role === 'work' || q.role === 'parking' || (q.role === 'delay' && config.delayMode === 'tiers'));
    for (const q of demoOwned) await admin.deleteQueue(q.name);
    await applyTopology(broker.connection, plan);
    say(`topology applied: ${DEMO_QUEUE}, ${delayQueues.length} delay queues (${config.delayMode} mode), parking lot ${config.parkingQueue}`);
    say(`flaky provider at ${provider.url} (transient failure rate ${failureRate}, 2 % permanent failures)`);

    for (let i = 0; i < messages; i++) {
      const body = { url: `${provider.url}/hooks/order-${i}`, method: 'POST', headers: { 'x-demo-id': `order-${i}` }, body: { order: i } };
      admin.sendToQueue(DEMO_QUEUE, Buffer.from(JSON.stringify(body)), { persistent: true, messageId: `order-${i}`, contentType: 'application/json' });
    }
    say(`published ${messages} webhook messages; invoking the pull function every ${intervalMs} ms\n`);

    const invoke = createPullFunction(createWebhookDelivery({ httpTimeoutMs: 2000 }), { config, log });
    const totals = emptySummary();
    const status = new StatusLine();
    const startedAt = Date.now();
    let invocations = 0;
    let waiting = Number.POSITIVE_INFINITY;
    while (Date.now() - startedAt < 10 * 60_000) {
      const summary = await invokeOnce(invoke, intervalMs);
      invocations++;
      for (const key of SUMMARY_COUNTS) totals[key] += summary[key];
      const inWork = (await admin.checkQueue(DEMO_QUEUE)).messageCount;
      waiting = 0;
      for (const q of delayQueues) waiting += (await admin.checkQueue(q)).messageCount;
      const parked = (await admin.checkQueue(config.parkingQueue)).messageCount;
      status.update(`invocation ${invocations}: delivered ${totals.acked}/${messages} · waiting in delay ${waiting} · in work queue ${inWork} · parked ${parked}`);
      if (inWork === 0 && waiting === 0 && totals.acked + totals.parked >= messages) break;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
    status.done();
    const stats = provider.stats();
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    const rows: [string, number, string][] = [
      ['published', messages, ''],
      ['delivered', totals.acked, 'the provider answered 2xx'],
      ['parked', totals.parked, `in ${config.parkingQueue}, with the error in its headers`],
      ['retries', totals.retried, 'copies sent through the delay queues'],
      ['requeued', totals.requeued, 'handed back untried (end of a budget)'],
      ['deferred', totals.deferred, 'sent to the delay path untried (circuit breaker open)'],
      ['lost', messages - totals.acked - totals.parked, 'published but neither delivered nor parked'],
      ['invocations', invocations, `one every ${intervalMs} ms`],
      ['provider requests', stats.requests, `${stats.distinctIdsSucceeded} distinct orders got a 2xx`],
    ];
    say(`\nsettled in ${seconds} s\n`);
    for (const [name, value, note] of rows) say(`  ${name.padEnd(18)} ${String(value).padStart(7)}   ${note}`);
    say('\nThe demo queues stay for you to look at; the next run resets them.');
    return totals.acked + totals.parked === messages ? 0 : 1;
  } finally {
    await provider.close();
    await broker.close();
  }
}

/** One invocation; a failed one (broker restart...) is reported and the schedule goes on. */
async function invokeOnce(invoke: ReturnType<typeof createPullFunction>, intervalMs: number): Promise<Summary> {
  const deadline = Date.now() + Math.max(5000, intervalMs * 4);
  try {
    return await invoke({}, { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => deadline - Date.now() });
  } catch (error) {
    if (error instanceof PullAbortedError) {
      process.stderr.write(`\ninvocation failed: ${error.message}\n`);
      return error.summary;
    }
    throw error;
  }
}

await runCli(USAGE, main);
