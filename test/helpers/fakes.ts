/** Hand-written fakes for unit tests: no broker, no network, every call recorded. */
import type { Channel, ConsumeMessage, MessageProperties, Options } from 'amqplib';
import type { Publisher } from '../../shared/amqp/confirm-publisher.js';
import { createLogger, type Logger, type LogLevel } from '../../shared/observability/logger.js';
import type { ParkedView } from '../../shared/parked/parked-view.js';
import type { Progress } from '../../shared/parked/progress.js';
import type { WalkCounts } from '../../shared/parked/walk.js';

/** One publish the fake saw. */
type PublishCall = {
  readonly exchange: string;
  readonly routingKey: string;
  readonly content: Buffer;
  readonly options: Options.Publish;
};

/** What one publish does: confirm, or reject with this error. */
type PublishOutcome = 'confirm' | Error;

/**
 * A `Publisher` that records each publish and settles it per a script, in order (`confirm` once the
 * script runs out). It writes `publish <exchange>/<key>`, then `confirm` or `reject` to `events`,
 * a log it may share with a `FakeChannel`, so tests can assert what happened before what.
 */
class FakePublisher implements Publisher {
  public readonly calls: PublishCall[] = [];

  public constructor(
    private readonly script: PublishOutcome[] = [],
    private readonly events: string[] = [],
  ) {}

  public async publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void> {
    this.calls.push({ exchange, routingKey, content, options });
    this.events.push(`publish ${exchange}/${routingKey}`);
    const outcome = this.script.shift() ?? 'confirm';
    // A broker confirm never arrives synchronously: let other work run first.
    await new Promise((resolve) => setImmediate(resolve));
    this.events.push(outcome === 'confirm' ? 'confirm' : 'reject');
    if (outcome !== 'confirm') throw outcome;
  }
}

/**
 * The two methods of an amqplib `Channel` the ledger uses. `closed` makes both throw, as amqplib does
 * on a closed channel; only calls that went through are recorded.
 */
class FakeChannel {
  public readonly acks: ConsumeMessage[] = [];
  public readonly nacks: { readonly message: ConsumeMessage; readonly allUpTo: boolean; readonly requeue: boolean }[] = [];
  /** Acks and nacks sent with `allUpTo` (multiple), in order: what they settle is every delivery up to `tag`. */
  public readonly multiples: { readonly kind: 'ack' | 'nack'; readonly tag: number }[] = [];
  public closed = false;

  public constructor(private readonly events: string[] = []) {}

  public ack(message: ConsumeMessage, allUpTo = false): void {
    this.assertOpen();
    this.acks.push(message);
    this.events.push('ack');
    if (allUpTo) this.multiples.push({ kind: 'ack', tag: message.fields.deliveryTag });
  }

  public nack(message: ConsumeMessage, allUpTo = false, requeue = true): void {
    this.assertOpen();
    this.nacks.push({ message, allUpTo, requeue });
    this.events.push('nack');
    if (allUpTo) this.multiples.push({ kind: 'nack', tag: message.fields.deliveryTag });
  }

  /** This fake, typed as the amqplib channel it stands in for. */
  public asChannel(): Channel {
    return this as unknown as Channel;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('Channel closed');
  }
}

type DeliveryOptions = {
  readonly body?: string;
  readonly deliveryTag?: number;
  readonly exchange?: string;
  readonly routingKey?: string;
  readonly headers?: Record<string, unknown>;
  readonly properties?: Partial<MessageProperties>;
};

/** A delivery as amqplib hands it to a consumer; only what a test names differs from a plain JSON message. */
function fakeDelivery(options: DeliveryOptions = {}): ConsumeMessage {
  return {
    content: Buffer.from(options.body ?? '{"orderId":42}'),
    fields: {
      consumerTag: 'ctag-test',
      deliveryTag: options.deliveryTag ?? 1,
      redelivered: false,
      exchange: options.exchange ?? 'shop',
      routingKey: options.routingKey ?? 'orders.created',
    },
    properties: {
      contentType: 'application/json',
      messageId: `m-${options.deliveryTag ?? 1}`,
      ...options.properties,
      headers: options.headers ?? {},
    } as MessageProperties,
  };
}

/** A parked message as the parking-lot commands read it: PartnerDown, 6 attempts, parked 3 h before `nowMs`. */
function fakeParkedView(nowMs: number, overrides: Partial<ParkedView> = {}): ParkedView {
  return {
    messageId: 'order-1',
    parkedAt: new Date(nowMs - 3 * 3_600_000),
    attempts: 6,
    errorName: 'PartnerDown',
    errorMessage: 'HTTP 503',
    errorFields: undefined,
    parkReason: 'retries exhausted: 5 of 5 made',
    sourceQueue: 'orders',
    brokerSourceQueue: undefined,
    routingKey: 'orders.created',
    headers: { tenant: 'acme', 'x-retry-no': 5, region: Buffer.from('eu') },
    body: Buffer.from('{"orderId":1,"customer":"Ünal"}'),
    ...overrides,
  };
}

/** A logger that drops everything. */
const silentLogger: Logger = createLogger({ level: 'silent' });

/** A logger that keeps its lines; `entries()` parses them. */
function recordingLogger(level: LogLevel = 'debug'): { readonly log: Logger; readonly lines: string[]; entries(): Record<string, unknown>[] } {
  const lines: string[] = [];
  return {
    log: createLogger({ level, write: (line) => lines.push(line) }),
    lines,
    entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** A parking-lot `Progress` that keeps what it was told: the lines printed and the final counts. */
class RecordingProgress implements Progress {
  public readonly printed: string[] = [];
  public updates = 0;
  public final: Readonly<WalkCounts> | undefined;

  public update(): void {
    this.updates++;
  }

  public print(line: string): void {
    this.printed.push(line);
  }

  public stop(counts: Readonly<WalkCounts>): void {
    this.final = { ...counts };
  }
}

export { FakeChannel, fakeDelivery, fakeParkedView, FakePublisher, RecordingProgress, recordingLogger, silentLogger };
export type { PublishOutcome };
