import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { readerLockQueue } from '../../shared/parked/reader-lock.js';
import { pauseMarkerQueue } from '../../shared/amqp/pause-marker.js';
import amqp, { type Channel, type ChannelModel, type ConfirmChannel } from 'amqplib';
import { nackCounts, parseBrokerVersion } from '../../shared/core/mode-settings.js';
import { nativeBrokerRefusal } from '../../shared/topology/native-broker.js';

/** The variable naming the file where `uniqueName` lists the names of this run (set by the leftover check). */
const RUN_NAMES_FILE = 'BOOMERANG_TEST_RUN_NAMES';

/** The broker the integration tests use; they fail loudly (never skip) when it does not answer. */
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/**
 * A unique name for one test's queue or exchange, so parallel files and CI runs never collide. Under
 * the leftover check (test/helpers/leftover-check.ts) each name is also written to the run's list, so
 * that only this run's leftovers are blamed, not those of a run beside it on the same broker.
 */
function uniqueName(label = 'q'): string {
  const name = `test-${label}-${randomUUID().slice(0, 8)}`;
  const list = process.env[RUN_NAMES_FILE];
  if (list !== undefined && list !== '') appendFileSync(list, `${name}\n`);
  return name;
}

/**
 * A connection for test set-up and assertions, plus a cleanup list: whatever a test registers
 * with `track` is deleted by `cleanup()` (call it in `afterEach`/`afterAll`).
 */
class TestBroker {
  private readonly queues = new Set<string>();
  private readonly exchanges = new Set<string>();

  private constructor(
    public readonly connection: ChannelModel,
    public readonly channel: ConfirmChannel,
  ) {}

  public static async open(): Promise<TestBroker> {
    const connection = await amqp.connect(AMQP_URL, { noDelay: true });
    // A confirm channel, so that a count waits for what this channel published (see messageCount).
    const channel = await connection.createConfirmChannel();
    return new TestBroker(connection, channel);
  }

  public trackQueue(...names: string[]): void {
    for (const name of names) this.queues.add(name);
  }

  public trackExchange(...names: string[]): void {
    for (const name of names) this.exchanges.add(name);
  }

  /** Every message in `queue` right now, acked (removed); waits until `count` arrived or `timeoutMs`. */
  public async drain(queue: string, count: number, timeoutMs = 10_000): Promise<amqp.GetMessage[]> {
    const out: amqp.GetMessage[] = [];
    const deadline = Date.now() + timeoutMs;
    while (out.length < count && Date.now() < deadline) {
      const msg = await this.channel.get(queue, { noAck: true });
      if (msg) out.push(msg);
      else await sleep(25);
    }
    return out;
  }

  /**
   * Whether this broker raises `x-delivery-count` when a message is given back with a requeueing nack
   * (3.x, 4.0-4.2): there the pull function defers untried messages instead of giving them back.
   */
  public get giveBackCounts(): boolean {
    return nackCounts(parseBrokerVersion(this.connection.connection.serverProperties.version));
  }

  /**
   * How many messages `queue` holds once everything published on this channel is confirmed. A
   * quorum queue counts a publish only once Raft has applied it, so a count taken straight after an
   * unconfirmed publish can miss it (a CI run on 4.0 counted 0 of 1).
   */
  public async messageCount(queue: string): Promise<number> {
    await this.channel.waitForConfirms();
    const ok = await this.channel.checkQueue(queue);
    return ok.messageCount;
  }

  /**
   * Waits until `queue` holds at least `count` messages (what was published is in once the broker
   * counts it); throws naming the queue and both counts after `timeoutMs`, so a test never goes on
   * with fewer than it set up.
   * @example publishAll(...); await broker.holds(config.workQueue, 6);
   */
  public async holds(queue: string, count: number, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (let held = await this.messageCount(queue); held < count; held = await this.messageCount(queue)) {
      if (Date.now() > deadline) throw new Error(`${queue} holds ${held} messages, not ${count}, after ${timeoutMs} ms`);
      await sleep(10);
    }
  }

  /** Whether the queue or exchange exists, asked on a throwaway channel (a 404 closes the channel). */
  public async exists(kind: 'queue' | 'exchange', name: string): Promise<boolean> {
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    try {
      await (kind === 'queue' ? channel.checkQueue(name) : channel.checkExchange(name));
      await channel.close();
      return true;
    } catch {
      return false;
    }
  }

  /** Deletes every tracked queue and exchange (each on its own channel: a 404 closes a channel). */
  public async cleanup(): Promise<void> {
    // A parking lot's reader lock outlives its last reader by 10 s (x-expires): it goes with the lot.
    // A work queue's pause marker (declared at its first pause) lives a day unused: it goes with the queue.
    for (const q of this.queues)
      await this.quietly(async (ch) => Promise.all([ch.deleteQueue(q), ch.deleteQueue(readerLockQueue(q)), ch.deleteQueue(pauseMarkerQueue(q))]));
    for (const x of this.exchanges) await this.quietly((ch) => ch.deleteExchange(x));
    this.queues.clear();
    this.exchanges.clear();
  }

  public async close(): Promise<void> {
    await this.cleanup();
    await this.connection.close().catch(() => undefined);
  }

  private async quietly(op: (ch: Channel) => Promise<unknown>): Promise<void> {
    const ch = await this.connection.createChannel();
    ch.on('error', () => undefined);
    try {
      await op(ch);
      await ch.close();
    } catch {
      // Already gone: nothing to clean.
    }
  }
}

/**
 * The version the broker at `url` announces (its `version` server property), e.g. `4.3.6`. Tests that
 * exist for one broker version only are gated on it, so each CI leg says which broker it means
 * (`EXPECT_BROKER_VERSION`, a prefix such as `4.3`): another broker answering there fails loudly,
 * instead of letting that leg's cases skip. No broker answering fails loudly too.
 */
async function brokerVersion(url = AMQP_URL): Promise<string> {
  const connection = await amqp.connect(url);
  let version: string;
  try {
    version = String(connection.connection.serverProperties.version);
  } finally {
    await connection.close();
  }
  const expected = process.env.EXPECT_BROKER_VERSION;
  if (url === AMQP_URL && expected !== undefined && expected !== '' && !version.startsWith(expected)) {
    throw new Error(`EXPECT_BROKER_VERSION=${expected}, but the broker at AMQP_URL is RabbitMQ ${version}: the tests meant for ${expected} would not run`);
  }
  return version;
}

/**
 * The version of the broker at `url` and whether it can run native mode (4.3+). When it cannot, says
 * so on the log with `what`, the cases that therefore skip.
 * @example const { version, native } = await nativeSupport('native SIGKILL cases');
 */
async function nativeSupport(what: string, url = AMQP_URL): Promise<{ version: string; native: boolean }> {
  const version = await brokerVersion(url);
  const native = nativeBrokerRefusal(version) === undefined;
  if (!native) console.log(`[skip] ${what} skipped: RabbitMQ ${version} has no delayed retry on quorum queues (4.3 or later)`);
  return { version, native };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export { AMQP_URL, brokerVersion, nativeSupport, RUN_NAMES_FILE, sleep, TestBroker, uniqueName };
