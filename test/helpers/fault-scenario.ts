import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type Options } from 'amqplib';
import { loadConfig, topologyOptionsFromConfig, type Config } from '../../shared/config/config.js';
import { pauseMarkerQueue } from '../../shared/amqp/pause-marker.js';
import { silentLogger } from './fakes.js';
import { runNativePull } from '../../shared/native/native-pull.js';
import { NativeAnnotation } from '../../shared/native/native-annotations.js';
import { runPull } from '../../shared/pull/pull.js';
import { createIdempotencyGuard, type IdempotencyGuard } from '../../shared/idempotency/guard.js';
import type { Summary } from '../../shared/observability/summary.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { allExchanges, buildTopologyPlan } from '../../shared/topology/plan.js';
import type { TopologyPlan } from '../../shared/topology/types.js';
import { sleep, uniqueName } from './broker.js';
import { createFlakyRecorder } from './flaky-recorder.js';
import { accountFor, drainQueue, keyOf, readRecords, type Account } from './message-account.js';

/**
 * One fault scenario on one broker: its own work queue and topology, N messages with known ids, a
 * record file the handlers append to, and the final accounting of where every message ended.
 */
class FaultScenario {
  private guard: IdempotencyGuard | undefined;

  private constructor(
    public readonly config: Config,
    public readonly env: Readonly<Record<string, string>>,
    public readonly plan: TopologyPlan,
    public readonly recordFile: string,
    private readonly dir: string,
    public readonly ids: string[],
  ) {}

  /**
   * Applies the topology for a fresh work queue on `url` and publishes `messages` persistent,
   * confirmed 1 KiB JSON messages with ids `<queue>-<i>`.
   */
  public static async prepare(options: { url: string; env: Record<string, string>; messages: number; label: string }): Promise<FaultScenario> {
    const env = { AMQP_URL: options.url, WORK_QUEUE: uniqueName(options.label), BREAKER_THRESHOLD: '0', ...options.env };
    const config = loadConfig(env);
    const plan = buildTopologyPlan(topologyOptionsFromConfig(config));
    const dir = mkdtempSync(join(tmpdir(), 'boomerang-fault-'));
    const scenario = new FaultScenario(config, env, plan, join(dir, 'records.txt'), dir, []);
    await withChannel(config.amqpUrls[0] as string, async (connection) => {
      await applyTopology(connection, plan);
    });
    await scenario.publish(options.messages);
    return scenario;
  }

  /**
   * The in-process invocations' guard when the scenario runs with idempotency on (IDEMPOTENCY_STORE in
   * its env): one per scenario, like one warm container. The child invocations make their own.
   */
  public get idempotency(): IdempotencyGuard | undefined {
    if (this.config.idempotency === undefined) return undefined;
    this.guard ??= createIdempotencyGuard(this.config.idempotency, { logger: silentLogger });
    return this.guard;
  }

  /** Delay queues of the plan (tiers or exact levels). */
  public get delayQueues(): string[] {
    return this.plan.queues.filter((q) => q.role === 'delay').map((q) => q.name);
  }

  public async publish(count: number, url = this.config.amqpUrls[0] as string): Promise<void> {
    const padding = 'x'.repeat(1000);
    await withConfirmChannel(url, async (channel) => {
      const start = this.ids.length;
      for (let i = start; i < start + count; i++) {
        const id = `${this.config.workQueue}-${i}`;
        this.ids.push(id);
        channel.sendToQueue(this.config.workQueue, Buffer.from(JSON.stringify({ i, padding })), {
          persistent: true,
          messageId: id,
          contentType: 'application/json',
        });
      }
      await channel.waitForConfirms();
    });
  }

  /**
   * Publishes messages exactly as given (confirmed) and accounts for them under `key`: the message id,
   * or for a message without one, `messageKey(undefined, content)`.
   */
  public async publishRaw(
    messages: readonly { key: string; content: Buffer; options: Options.Publish }[],
    url = this.config.amqpUrls[0] as string,
  ): Promise<void> {
    await withConfirmChannel(url, async (channel) => {
      for (const { key, content, options } of messages) {
        this.ids.push(key);
        channel.sendToQueue(this.config.workQueue, content, options);
      }
      await channel.waitForConfirms();
    });
  }

  /**
   * Messages ready in the work queue and the delay queues right now. A native work queue leaves out
   * of its count the messages it holds until their delivery time (measured on 4.3.6).
   */
  public async inFlight(url = this.config.amqpUrls[0] as string): Promise<number> {
    return withChannel(url, async (_connection, channel) => {
      let total = 0;
      for (const queue of [this.config.workQueue, ...this.delayQueues]) total += (await channel.checkQueue(queue)).messageCount;
      return total;
    });
  }

  /**
   * Invokes the function in-process with a handler that always succeeds (and records), again and
   * again, until the work and delay queues stay empty for `quietMs` (longer than any delay the
   * scenarios ask for, so that a native queue holds nothing either). Invocations that fail (a broker
   * still recovering) are retried, as a scheduler would. `idleTimeoutMs` replaces the scenario's
   * IDLE_TIMEOUT_MS for these invocations only: a long one (set for the scenario's children) makes
   * each drain invocation wait that long once the queue is empty, and `quietMs` already waits for
   * anything still delayed.
   */
  public async drainUntilQuiet(options: { quietMs?: number; timeoutMs?: number; budgetMs?: number; idleTimeoutMs?: number } = {}): Promise<Summary[]> {
    const quietMs = options.quietMs ?? 1500;
    const config = options.idleTimeoutMs === undefined ? this.config : { ...this.config, idleTimeoutMs: options.idleTimeoutMs };
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    const handler = createFlakyRecorder({ recordFile: this.recordFile, failPercent: 0, seed: 'drain' });
    const summaries: Summary[] = [];
    const run = this.config.delayMode === 'native' ? runNativePull : runPull;
    let quietSince: number | undefined;
    while (Date.now() < deadline) {
      try {
        summaries.push(await run({ config, handler, budgetMs: options.budgetMs ?? 5000, log: silentLogger, idempotency: this.idempotency }));
        const left = await this.inFlight();
        if (left > 0) quietSince = undefined;
        else quietSince ??= Date.now();
        if (quietSince !== undefined && Date.now() - quietSince >= quietMs) return summaries;
      } catch {
        quietSince = undefined;
      }
      await sleep(100);
    }
    throw new Error(`drainUntilQuiet: ${this.config.workQueue} did not go quiet; summaries: ${JSON.stringify(summaries.slice(-3))}`);
  }

  /**
   * Takes every message out of the parking lot, the work queue and the delay queues, and accounts
   * for every id sent: handled (record file), parked, still queued, missing or duplicated.
   */
  public async account(
    url = this.config.amqpUrls[0] as string,
  ): Promise<Account & { parkReasons: Map<string, string>; parkedHeaders: Map<string, Record<string, unknown>> }> {
    return withChannel(url, async (_connection, channel) => {
      const parked = await drainQueue(channel, this.config.parkingQueue);
      const queued = [];
      for (const queue of [this.config.workQueue, ...this.delayQueues]) queued.push(...(await drainQueue(channel, queue)));
      const parkReasons = new Map(parked.map((m) => [keyOf(m), parkReason(m.properties.headers)]));
      const parkedHeaders = new Map(parked.map((m) => [keyOf(m), (m.properties.headers ?? {}) as Record<string, unknown>]));
      const account = accountFor(this.ids, { records: readRecords(this.recordFile), parkedIds: parked.map(keyOf), queuedIds: queued.map(keyOf) });
      return { ...account, parkReasons, parkedHeaders };
    });
  }

  /**
   * Deletes the scenario's queues and exchanges and its record file; with FAULT_KEEP_RECORDS=<folder>,
   * the record file is first copied there as `<work queue>.txt`, to study a run after it.
   */
  public async cleanup(url = this.config.amqpUrls[0] as string): Promise<void> {
    this.keepRecords(process.env.FAULT_KEEP_RECORDS);
    // Its keys in the store expire on their own (IDEMPOTENCY_TTL_SECONDS): each scenario's ids are its own.
    await this.guard?.close().catch(() => undefined);
    await withChannel(url, async (connection) => {
      for (const queue of this.plan.queues) await quietly(connection, (ch) => ch.deleteQueue(queue.name));
      // Declared by the first pause a partner asked for, if any.
      await quietly(connection, (ch) => ch.deleteQueue(pauseMarkerQueue(this.config.workQueue)));
      for (const exchange of allExchanges(this.plan)) await quietly(connection, (ch) => ch.deleteExchange(exchange.name));
    }).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private keepRecords(folder: string | undefined): void {
    if (folder === undefined || folder === '' || !existsSync(this.recordFile)) return;
    mkdirSync(folder, { recursive: true });
    const kept = join(folder, `${this.config.workQueue}.txt`);
    copyFileSync(this.recordFile, kept);
    console.log(`[fault] record file kept at ${kept}`);
  }
}

/** A parked copy's reason; a natively parked message carries it as an annotation (`x-opt-…`). */
function parkReason(headers: Record<string, unknown> | undefined): string {
  return String(headers?.['boomerang-park-reason'] ?? headers?.[NativeAnnotation.parkReason]);
}

async function withChannel<T>(url: string, work: (connection: ChannelModel, channel: Channel) => Promise<T>): Promise<T> {
  const connection = await amqp.connect(url);
  connection.on('error', () => undefined);
  try {
    const channel = await connection.createChannel();
    return await work(connection, channel);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function withConfirmChannel<T>(url: string, work: (channel: ConfirmChannel) => Promise<T>): Promise<T> {
  const connection = await amqp.connect(url);
  connection.on('error', () => undefined);
  try {
    return await work(await connection.createConfirmChannel());
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function quietly(connection: ChannelModel, op: (ch: Channel) => Promise<unknown>): Promise<void> {
  const ch = await connection.createChannel();
  ch.on('error', () => undefined);
  try {
    await op(ch);
    await ch.close();
  } catch {
    // Already gone.
  }
}

export { FaultScenario, withChannel, withConfirmChannel };
