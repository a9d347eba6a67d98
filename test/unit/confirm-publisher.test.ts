import type { ConfirmChannel, Options } from 'amqplib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfirmPublisher } from '../../shared/amqp/confirm-publisher.js';
import { PublishError } from '../../shared/errors.js';

/** A confirm channel that never confirms by itself: the test calls `confirm(i)` or emits events. */
class SilentChannel {
  public readonly publishes: { readonly options: Options.Publish; readonly callback: (err: unknown) => void }[] = [];
  private readonly listeners = new Map<string, ((arg?: unknown) => void)[]>();

  public on(event: string, listener: (arg?: unknown) => void): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }

  public emit(event: string, arg?: unknown): void {
    for (const listener of this.listeners.get(event) ?? []) listener(arg);
  }

  public publish(_exchange: string, _routingKey: string, _content: Buffer, options: Options.Publish, callback: (err: unknown) => void): boolean {
    this.publishes.push({ options, callback });
    return true;
  }

  public confirm(index: number, err: unknown = null): void {
    this.publishes[index]?.callback(err);
  }

  public asChannel(): ConfirmChannel {
    return this as unknown as ConfirmChannel;
  }
}

async function reasonOf(work: Promise<void>): Promise<string> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  return error instanceof PublishError ? error.reason : `not a PublishError: ${String(error)}`;
}

describe('ConfirmPublisher', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('times out each publish after its own PUBLISH_TIMEOUT_MS, oldest first, with one timer for all', async () => {
    // Prepare
    const channel = new SilentChannel();
    const publisher = new ConfirmPublisher(channel.asChannel(), 1000);
    const first = reasonOf(publisher.publish('', 'q', Buffer.from('1'), {}));
    await vi.advanceTimersByTimeAsync(400);
    const second = reasonOf(publisher.publish('', 'q', Buffer.from('2'), {}));
    // Act, Assess: the first is due at 1000 ms, the second at 1400 ms
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(600);
    expect(await first).toBe('timeout');
    expect(publisher.inFlight).toBe(1);
    await vi.advanceTimersByTimeAsync(399);
    expect(publisher.inFlight).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await second).toBe('timeout');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('drops its timer once nothing is pending, and a late confirm of a timed-out publish does nothing', async () => {
    // Prepare
    const channel = new SilentChannel();
    const publisher = new ConfirmPublisher(channel.asChannel(), 1000);
    const confirmed = publisher.publish('', 'q', Buffer.from('1'), {});
    // Act
    channel.confirm(0);
    await confirmed;
    // Assess
    expect(vi.getTimerCount()).toBe(0);
    const late = reasonOf(publisher.publish('', 'q', Buffer.from('2'), {}));
    await vi.advanceTimersByTimeAsync(1000);
    channel.confirm(1);
    expect(await late).toBe('timeout');
  });

  it('rejects a nacked publish as nacked and a returned one as returned, matched by its copy id', async () => {
    // Prepare
    const channel = new SilentChannel();
    const publisher = new ConfirmPublisher(channel.asChannel(), 1000);
    const nacked = reasonOf(publisher.publish('', 'q', Buffer.from('1'), {}));
    const returned = reasonOf(publisher.publish('x', 'k', Buffer.from('2'), {}));
    const fine = publisher.publish('', 'q', Buffer.from('3'), {});
    // Act: the broker returns the second before its ack
    channel.emit('return', { properties: { headers: channel.publishes[1]?.options.headers } });
    channel.confirm(0, new Error('nack'));
    channel.confirm(1);
    channel.confirm(2);
    // Assess
    expect([await nacked, await returned]).toEqual(['nacked', 'returned']);
    await expect(fine).resolves.toBeUndefined();
  });

  it('fails every pending publish as channel-closed when the channel closes, with the close reason', async () => {
    // Prepare
    const channel = new SilentChannel();
    const publisher = new ConfirmPublisher(channel.asChannel(), 1000);
    const pending = [publisher.publish('', 'q', Buffer.from('1'), {}), publisher.publish('', 'q', Buffer.from('2'), {})];
    // Act
    channel.emit('error', new Error('PRECONDITION_FAILED - boom'));
    channel.emit('close');
    // Assess
    const errors = await Promise.all(
      pending.map((p) =>
        p.then(
          () => undefined,
          (e: unknown) => e as PublishError,
        ),
      ),
    );
    expect(errors.map((e) => e?.reason)).toEqual(['channel-closed', 'channel-closed']);
    expect(errors[0]?.message).toContain('PRECONDITION_FAILED - boom');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects as rejected-locally when amqplib throws at once', async () => {
    // Prepare
    const channel = new SilentChannel();
    channel.publish = () => {
      throw new Error('Frame size exceeded');
    };
    const publisher = new ConfirmPublisher(channel.asChannel(), 1000);
    // Act, Assess
    expect(await reasonOf(publisher.publish('', 'q', Buffer.from('1'), {}))).toBe('rejected-locally');
    expect(publisher.inFlight).toBe(0);
  });

  it.each([
    { bodyBytes: 10, sent: true },
    { bodyBytes: 11, sent: false },
  ])('sends a body of $bodyBytes bytes under a 10-byte MAX_MESSAGE_BYTES: $sent', async ({ bodyBytes, sent }) => {
    // Prepare
    const channel = new SilentChannel();
    const publisher = new ConfirmPublisher(channel.asChannel(), 1000, 10);
    // Act
    const outcome = reasonOf(publisher.publish('', 'q', Buffer.alloc(bodyBytes), {}));
    channel.confirm(0);
    // Assess
    expect(await outcome).toBe(sent ? 'not a PublishError: undefined' : 'too-large');
    expect(channel.publishes).toHaveLength(sent ? 1 : 0);
  });

  it('names the body size and the limit when it refuses a copy', async () => {
    // Prepare
    const publisher = new ConfirmPublisher(new SilentChannel().asChannel(), 1000, 10);
    // Act
    const error = await publisher.publish('', 'orders.delay.1000ms', Buffer.alloc(11), {}).catch((e: unknown) => e as Error);
    // Assess
    expect(error?.message).toBe('the body is 11 bytes, over MAX_MESSAGE_BYTES (10): no copy is sent to queue "orders.delay.1000ms"');
  });
});
