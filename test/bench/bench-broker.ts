import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { pauseMarkerQueue } from '../../shared/amqp/pause-marker.js';

/** The bench's own connection for set-up, preloading and clean-up; never part of a timed run. */
class BenchBroker {
  private constructor(
    public readonly url: string,
    public readonly connection: ChannelModel,
  ) {}

  public static async open(url: string): Promise<BenchBroker> {
    const connection = await amqp.connect(url);
    connection.on('error', () => undefined);
    return new BenchBroker(url, connection);
  }

  /**
   * Fills `queue` with `count` persistent messages of about `bytes` bytes of JSON each, confirmed
   * (streamed, 1000 at a time), and returns once the broker holds them all. Their ids are `<idPrefix>-<i>`
   * (a run with idempotency on needs new ones each time, or every message is a duplicate).
   */
  public async preload(queue: string, count: number, bytes = 1024, headers: Record<string, unknown> = {}, idPrefix = 'm'): Promise<void> {
    const channel = await this.connection.createConfirmChannel();
    const padding = 'x'.repeat(Math.max(0, bytes - 40));
    for (let start = 0; start < count; start += 1000) {
      for (let i = start; i < Math.min(count, start + 1000); i++) {
        const body = Buffer.from(JSON.stringify({ i, padding }).slice(0, bytes));
        channel.sendToQueue(queue, body, { persistent: true, messageId: `${idPrefix}-${i}`, contentType: 'application/json', headers });
      }
      await channel.waitForConfirms();
    }
    await channel.close();
  }

  public async count(queue: string): Promise<number> {
    return this.quietly(async (ch) => (await ch.checkQueue(queue)).messageCount, -1);
  }

  /** Empties `queue`; resolves with how many messages it removed (on a 4.3 quorum queue, the delayed ones too), -1 when it failed. */
  public async purge(queue: string): Promise<number> {
    return this.quietly(async (ch) => (await ch.purgeQueue(queue)).messageCount, -1);
  }

  /** Deletes `queue`, and its pause marker: every invocation on a work queue declares one beside it. */
  public async deleteQueue(queue: string): Promise<void> {
    await this.quietly((ch) => ch.deleteQueue(queue), undefined);
    await this.quietly((ch) => ch.deleteQueue(pauseMarkerQueue(queue)), undefined);
  }

  public async deleteExchange(exchange: string): Promise<void> {
    await this.quietly((ch) => ch.deleteExchange(exchange), undefined);
  }

  /** The broker's version, from the connection's server properties. */
  public get serverVersion(): string {
    const props = (this.connection as unknown as { connection?: { serverProperties?: { version?: string; product?: string } } }).connection?.serverProperties;
    return `${props?.product ?? 'RabbitMQ'} ${props?.version ?? '?'}`;
  }

  public async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }

  /** Runs one operation on its own channel: a 404 closes the channel it happens on. */
  private async quietly<T>(op: (ch: Channel) => Promise<T>, fallback: T): Promise<T> {
    const ch = await this.connection.createChannel();
    ch.on('error', () => undefined);
    try {
      const result = await op(ch);
      await ch.close();
      return result;
    } catch {
      return fallback;
    }
  }
}

export { BenchBroker };
