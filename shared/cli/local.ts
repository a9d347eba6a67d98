import { randomUUID } from 'node:crypto';
import { createPullFunction } from '../pull/pull-function.js';
import { connectBroker } from '../amqp/connection.js';
import { connectManaged } from '../amqp/managed-connection.js';
import { publishDemoMessages } from '../demo/demo-publisher.js';
import { isNamedError } from '../errors.js';
import type { PullAbortedError } from '../core/invocation-errors.js';
import { DEFAULT_DEMO_FUNCTION, DEMO_QUEUE, demoOptions, PARTNER_RATE_LIMIT, PERMANENT_FAILURE_RATE } from './demo-options.js';
import { ensureBroker } from '../demo/ensure-broker.js';
import { startFlakyProvider, type FlakyProvider } from '../demo/flaky-provider.js';
import { StatusLine } from '../demo/status-line.js';
import { createLogger, logLevelFrom } from '../observability/logger.js';
import { emptySummary, SUMMARY_COUNTS, type Summary } from '../observability/summary.js';
import { topologyOptionsFromConfig } from '../config/config.js';
import { applyTopology } from '../topology/apply.js';
import { brokerVersionOf } from '../topology/broker-ops.js';
import { buildTopologyPlan } from '../topology/plan.js';
import { parseCli } from './args.js';
import { type CliCommand, sameInThisRepository } from './command.js';
import { UsageError } from '../errors.js';
import { askYes } from '../parked/session.js';

const USAGE = `Usage: boomerang local [--function <name>] [--messages <n>] [--failure-rate <0..0.98>] [--interval-ms <n>] [--work-queue <name>]
       [--functions-dir <dir>]

The whole job end to end on this machine: makes sure RabbitMQ runs (starts a local rabbitmq-server
if it is installed), resets the demo's queues (deletes and recreates the work queue, its parking lot
<queue>.parked and its park notes <queue>.parked.notes and, in tiers mode, its delay queues, with whatever they hold, and its delay-path
marker exchange; it names them first),
starts a flaky local HTTP provider (random failures, and 429 over ${PARTNER_RATE_LIMIT} requests a second, which
pauses the queue), publishes messages for it, and invokes the declared queue's pull
function every couple of seconds as a scheduler would, until everything settled.

  --function <name>     the declared queue to run (functions/<name>.ts; the folder is
                        --functions-dir, else BOOMERANG_FUNCTIONS_DIR when set): its handler and
                        options, on the demo's queues, with demo-sized retry timing. webhooks or
                        partner-sync (default ${DEFAULT_DEMO_FUNCTION}); when the folder declares no queue of
                        that name, the package's own example runs, with a note on stderr

  --messages <n>        how many webhook messages to publish, 1 to 100000 (default 300)
  --failure-rate <r>    fraction of provider answers that fail transiently (default 0.4; 2 % more
                        fail for good, so at most 0.98)
  --interval-ms <n>     time between invocations, 100 to 60000 (default 2000)
  --work-queue <name>   the demo's work queue (default ${DEMO_QUEUE}.<user>-<host>, yours alone on a
                        shared broker). The demo deletes and recreates it, its parking lot, its park
                        notes and its delay queues: a name outside ${DEMO_QUEUE}.* is reset only once you say yes
  --yes                 say yes to that without being asked (a script, no terminal)
  -h, --help            this text

Any variable the queue's file leaves to the environment applies too (MAX_RETRIES, BACKOFF_INITIAL_MS,
QUEUE_TYPE...), except WORK_QUEUE and PARKING_QUEUE: the demo only touches its own queues.
${sameInThisRepository('local')}`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(
    argv,
    {
      function: { type: 'string' },
      messages: { type: 'string' },
      'failure-rate': { type: 'string' },
      'interval-ms': { type: 'string' },
      'work-queue': { type: 'string' },
      yes: { type: 'boolean' },
    },
    { queue: 'work-queue' },
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const { messages, failureRate, intervalMs, name, notice, handler, feed, config, plan, ownQueues, ownExchanges, demoOwned } = await demoOptions(
    { ...values, queue: values['work-queue'] },
    process.env,
  );
  if (notice !== undefined) process.stderr.write(`${notice}\n`);
  if (!demoOwned && values.yes !== true) {
    // Not one of the demo's names: it may be somebody's queue. Say what goes, and go on only on a yes.
    const what = `the demo deletes and recreates ${ownQueues.join(', ')} (with whatever they hold)`;
    if (!process.stdin.isTTY)
      throw new UsageError(`--work-queue ${config.workQueue} is not one of the demo's own names (${DEMO_QUEUE}.*): ${what}. Pass --yes to let it`);
    if (!(await askYes(`${what[0]?.toUpperCase()}${what.slice(1)}. Go on? [y/N] `))) {
      process.stderr.write('nothing deleted\n');
      return 1;
    }
  }
  const demoQueue = config.workQueue;
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  const log = createLogger({ level: logLevelFrom(process.env.LOG_LEVEL ?? 'error') });

  await ensureBroker(config.amqpUrls, say);
  const delayQueues = plan.queues.filter((q) => q.role === 'delay').map((q) => q.name);
  const broker = await connectBroker({ urls: config.amqpUrls, connectTimeoutMs: config.connectTimeoutMs, connectionName: 'boomerang-local' });
  let provider: FlakyProvider | undefined;
  try {
    // The demo owns these queues: start from empty ones so the counts below are the demo's own.
    say(
      `resetting the demo's queues (deleted and recreated, with whatever they hold): ${ownQueues.join(', ')}; and its delay-path marker exchange ${ownExchanges.join(', ') || '(none)'}`,
    );
    const admin = await broker.connection.createChannel();
    for (const name of ownQueues) await admin.deleteQueue(name);
    // The marker vouches for the delay path just deleted: it goes too, and apply makes it again last.
    for (const name of ownExchanges) await admin.deleteExchange(name);
    // The plan from the flags cannot know the broker: its version picks the parking lot's arguments.
    await applyTopology(broker.connection, buildTopologyPlan({ ...topologyOptionsFromConfig(config), brokerVersion: brokerVersionOf(broker.connection) }));
    provider = await startFlakyProvider({
      failureRate,
      permanentFailureRate: PERMANENT_FAILURE_RATE,
      retryAfterSeconds: 3,
      rateLimitPerSecond: PARTNER_RATE_LIMIT,
      latencyMs: 5,
    });
    say(`topology applied: ${demoQueue}, ${delayQueues.length} delay queues (${config.delayMode} mode), parking lot ${config.parkingQueue}`);
    say(
      `flaky provider at ${provider.url} (transient failure rate ${failureRate}, ${PERMANENT_FAILURE_RATE * 100} % permanent failures, 429 over ${PARTNER_RATE_LIMIT} requests a second)`,
    );

    const url = provider.url;
    const publisher = await connectManaged({ urls: config.amqpUrls, connectTimeoutMs: config.connectTimeoutMs, connectionName: 'boomerang-local-publisher' });
    await publishDemoMessages(
      publisher,
      demoQueue,
      Array.from({ length: messages }, (_, i) => ({ messageId: `${name}-${i}`, body: feed.message(i, url) })),
    ).finally(() => publisher.close());
    // The handler reads its own settings (PARTNER_API_URL...) from the environment, as deployed.
    Object.assign(process.env, feed.env(url));
    say(`published ${messages} ${name} messages; invoking the ${name} pull function every ${intervalMs} ms\n`);

    const invoke = createPullFunction(handler, { config, log });
    const totals = emptySummary();
    const status = new StatusLine();
    const startedAt = Date.now();
    let invocations = 0;
    let waiting = Number.POSITIVE_INFINITY;
    while (Date.now() - startedAt < 10 * 60_000) {
      const summary = await invokeOnce(invoke, intervalMs);
      invocations++;
      for (const key of SUMMARY_COUNTS) totals[key] += summary[key];
      const inWork = (await admin.checkQueue(demoQueue)).messageCount;
      waiting = 0;
      for (const q of delayQueues) waiting += (await admin.checkQueue(q)).messageCount;
      const parked = (await admin.checkQueue(config.parkingQueue)).messageCount;
      status.update(
        `invocation ${invocations}: delivered ${totals.acked}/${messages} · waiting in delay ${waiting} · in work queue ${inWork} · parked ${parked}`,
      );
      if (inWork === 0 && waiting === 0 && totals.acked + totals.skippedDuplicates + totals.parked >= messages) break;
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
      [
        'requeued',
        totals.requeued,
        'given back untried, as they were (end of a budget; on RabbitMQ 4.3+ also breaker open, store down, a pause outlasting the budget)',
      ],
      [
        'deferred',
        totals.deferred,
        'sent to the delay path untried (an idempotency key busy, or, before RabbitMQ 4.3, breaker open, the store down, a pause outlasting the budget or no time left for it)',
      ],
      ['skipped', totals.skippedDuplicates, 'acked untried: its idempotency key had completed (IDEMPOTENCY_STORE)'],
      ['lost', messages - totals.acked - totals.skippedDuplicates - totals.parked, 'published but neither delivered, skipped nor parked'],
      ['invocations', invocations, `one every ${intervalMs} ms`],
      ['provider requests', stats.requests, stats.distinctIdsSucceeded > 0 ? `${stats.distinctIdsSucceeded} distinct orders got a 2xx` : ''],
    ];
    say(`\nsettled in ${seconds} s\n`);
    for (const [name, value, note] of rows) say(`  ${name.padEnd(18)} ${String(value).padStart(7)}   ${note}`);
    say('\nThe demo queues stay for you to look at; the next run resets them.');
    return totals.acked + totals.parked === messages ? 0 : 1;
  } finally {
    await provider?.close();
    await broker.close();
  }
}

/** One invocation; a failed one (broker restart...) is reported and the schedule goes on. */
async function invokeOnce(invoke: ReturnType<typeof createPullFunction>, intervalMs: number): Promise<Summary> {
  const deadline = Date.now() + Math.max(5000, intervalMs * 4);
  try {
    return await invoke({}, { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => deadline - Date.now() });
  } catch (error) {
    if (isNamedError<PullAbortedError>(error, 'PullAbortedError')) {
      process.stderr.write(`\ninvocation failed: ${error.message}\n`);
      return error.summary;
    }
    throw error;
  }
}

/** `boomerang local`. */
const localCommand: CliCommand = {
  name: 'local',
  summary: 'the end-to-end demo on this machine: a flaky partner, retries, a parking lot',
  usage: USAGE,
  run: main,
};

export { localCommand };
