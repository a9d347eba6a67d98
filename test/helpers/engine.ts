import type { Options } from 'amqplib';
import { loadConfig, topologyOptionsFromConfig, type Config } from '../../shared/config/config.js';
import type { AttemptTracer } from '../../shared/observability/attempt-tracer.js';
import { silentLogger } from './fakes.js';
import type { Handler } from '../../shared/message/message.js';
import { runNativePull } from '../../shared/native/native-pull.js';
import { runPull } from '../../shared/pull/pull.js';
import { SUMMARY_COUNTS, type Summary } from '../../shared/observability/summary.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { allExchanges, buildTopologyPlan } from '../../shared/topology/plan.js';
import { AMQP_URL, sleep, type TestBroker, uniqueName } from './broker.js';

/**
 * A config for one test: its own work queue, short real delays (the broker does the waiting),
 * no jitter unless asked, and a short idle timeout so invocations end soon after the queue empties.
 */
function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    AMQP_URL,
    WORK_QUEUE: uniqueName('work'),
    BACKOFF_INITIAL_MS: '200',
    BACKOFF_MULTIPLIER: '2',
    BACKOFF_MAX_MS: '3200',
    BACKOFF_JITTER: '0',
    MAX_RETRIES: '3',
    IDLE_TIMEOUT_MS: '150',
    SAFETY_MARGIN_MS: '500',
    ...env,
  });
}

/** Applies the config's topology and registers every queue and exchange it made for cleanup. */
async function setUpTopology(broker: TestBroker, config: Config): Promise<void> {
  const plan = buildTopologyPlan(topologyOptionsFromConfig(config));
  broker.trackQueue(...plan.queues.map((q) => q.name));
  broker.trackExchange(...allExchanges(plan).map((x) => x.name));
  await applyTopology(broker.connection, plan);
}

function publishJson(broker: TestBroker, queue: string, body: unknown, options: Options.Publish = {}): void {
  broker.channel.sendToQueue(queue, Buffer.from(JSON.stringify(body)), { persistent: true, contentType: 'application/json', ...options });
}

/** Runs one invocation with a short budget and a silent log (a native queue's, for `delayMode: 'native'`), traced by `tracer` if given. */
function pullOnce(config: Config, handler: Handler, budgetMs = 5000, tracer?: AttemptTracer): Promise<Summary> {
  const run = config.delayMode === 'native' ? runNativePull : runPull;
  return run({ config, handler, budgetMs, log: silentLogger, tracer });
}

/**
 * Invokes the pull function again and again, as a scheduler would, until `done()` says so or the
 * time runs out; returns every summary.
 */
async function pullUntil(
  config: Config,
  handler: Handler,
  done: (summaries: readonly Summary[]) => boolean,
  timeoutMs = 15_000,
  tracer?: AttemptTracer,
): Promise<Summary[]> {
  const summaries: Summary[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!done(summaries) && Date.now() < deadline) {
    summaries.push(await pullOnce(config, handler, 3000, tracer));
    if (!done(summaries)) await sleep(50);
  }
  if (!done(summaries)) throw new Error(`pullUntil: condition not met within ${timeoutMs} ms; summaries: ${JSON.stringify(summaries)}`);
  return summaries;
}

/** The counters of a summary. */
type Counts = Pick<Summary, (typeof SUMMARY_COUNTS)[number]>;

/** Sums the counters of several summaries. */
function total(summaries: readonly Summary[]): Counts {
  return Object.fromEntries(SUMMARY_COUNTS.map((k) => [k, summaries.reduce((sum, s) => sum + s[k], 0)])) as Counts;
}

/**
 * Node's `Date.now()` and the broker's TTL timer are two millisecond clocks read at slightly different
 * moments: a copy seen back 1-3 ms "early" by ours waited its whole TTL by the broker's (seen: 997 ms
 * for a 1000 ms TTL on a loaded machine). "Never early" checks allow this much.
 */
const CLOCK_SLACK_MS = 5;

/**
 * How early a quorum delay queue may hand a copy on, per delay hop: RabbitMQ 3.10.8 expired messages of
 * a quorum queue with a 1000 ms TTL after 993-995 ms (min and median of 40, measured 2026-11-24, by
 * Node's clock taken before the publish); classic queues there, and both types on 4.3.6, were never
 * early. Checks of a copy's wait allow this much per queue it passed through.
 */
const BROKER_EARLY_PER_HOP_MS = 10;

export { publishJson, pullOnce, pullUntil, setUpTopology, testConfig, total, BROKER_EARLY_PER_HOP_MS, CLOCK_SLACK_MS };
