/**
 * Drives one transport (core/transport.ts `Transport`) directly, as the invocation would, for the
 * transports' contract suites: opened with a real tally and deadlines, then taken from and settled
 * with verdicts the test writes, while the test looks at the broker.
 */
import { expect, it } from 'vitest';
import type { Config } from '../../shared/config/config.js';
import amqp, { type ConsumeMessage, type Options } from 'amqplib';
import { invocationDeadlines, type Deadlines, type OpenTransport, type Taken, type Transport } from '../../shared/core/transport.js';
import { type FailureReason, Tally } from '../../shared/core/tally.js';
import type { Verdict } from '../../shared/core/verdict.js';
import type { ErrorFacts } from '../../shared/retry/decide-retry.js';
import { AMQP_URL, type TestBroker, uniqueName } from './broker.js';
import { setUpTopology } from './engine.js';
import { tapRawHeaders } from './raw-headers.js';
import type { TcpProxy } from './tcp-proxy.js';

type Driven = { readonly transport: Transport; readonly tally: Tally; readonly deadlines: Deadlines };

/** Opens a transport with a fresh tally and the deadlines of `budgetMs` (margin 500 ms); fails when it has nothing to take. */
async function openTransport(open: OpenTransport, budgetMs = 10_000): Promise<Driven> {
  const startedAt = Date.now();
  const deadlines = invocationDeadlines(500, budgetMs, startedAt);
  const tally = new Tally();
  const opened = await open({ tally, deadlines, startedAt });
  if (opened.transport === undefined) throw new Error('the transport opened with nothing to take');
  return { transport: opened.transport, tally, deadlines };
}

/** Takes `count` messages, each within `waitMs`, or fails naming how many came. */
async function takeCount(transport: Transport, count: number, waitMs = 5000): Promise<Taken[]> {
  const taken: Taken[] = [];
  while (taken.length < count) {
    const next = await transport.take(waitMs);
    if (next === undefined) throw new Error(`took ${taken.length} of ${count} messages`);
    taken.push(next);
  }
  return taken;
}

/**
 * Deletes the work queue under a transport that took one message, then takes again, stops and
 * finishes as the invocation would: what the next take gave, what `ended()` said, and whether the
 * transport counted itself lost.
 */
async function takeAfterQueueDeleted(
  driven: Driven,
  broker: TestBroker,
  queue: string,
): Promise<{ next: Taken | undefined; ended: string | undefined; lost: boolean }> {
  const { transport, deadlines } = driven;
  await takeCount(transport, 1);
  await broker.channel.deleteQueue(queue);
  const next = await transport.take(5000);
  const ended = transport.ended();
  await transport.stopTaking();
  await transport.finish(deadlines);
  return { next, ended, lost: transport.lost.aborted };
}

/**
 * Takes `count` messages and acks the first (the rest stay open), waits until the broker sent the
 * rest of the queue within the prefetch or credit window (none ready any more), then stops taking,
 * gives back what arrived meanwhile, finishes and closes, as the invocation would. Returns what
 * `stopTaking` gave and what was left open.
 */
async function takeThenStop(driven: Driven, broker: TestBroker, queue: string, count: number): Promise<{ arrived: Taken[]; open: Taken[] }> {
  const { transport, deadlines } = driven;
  const [first, ...open] = await takeCount(transport, count);
  await expect.poll(() => broker.messageCount(queue)).toBe(0);
  transport.settle(first as Taken, verdicts.ack);
  const arrived = await transport.stopTaking();
  for (const taken of arrived) transport.settle(taken, verdicts.giveBack);
  await transport.finish(deadlines);
  await transport.close();
  return { arrived, open };
}

/**
 * Takes one message from a transport opened through `proxy`, then cuts every connection through it,
 * as a dropped network path would; waits for the transport to count itself lost and closes it. What
 * `failed` made of it, and what is back in `queue` (the broker's own give-back of the unsettled).
 */
async function cutAfterTake(transport: Transport, proxy: TcpProxy, queue: string): Promise<{ reason: FailureReason; error: Error; back: Arrival[] }> {
  await takeCount(transport, 1);
  const lost = new Promise<void>((resolve) => transport.lost.addEventListener('abort', () => resolve(), { once: true }));
  expect(proxy.cutAll()).toBeGreaterThan(0);
  await lost;
  const { reason, error } = await transport.failed(transport.lost.reason as Error);
  await transport.close();
  return { reason, error: error(new Tally().finish(Date.now())), back: await awaitArrivals(queue, 1) };
}

/** One transport's contract suite, as the cases every transport shares see it. */
type Suite = {
  readonly broker: () => TestBroker;
  readonly proxy: () => TcpProxy;
  /** The configuration of a queue of this transport's mode, with `env` over it. */
  readonly configOf: (env?: Record<string, string>) => Config;
  /** Publishes one message of the suite's to the work queue. */
  readonly publish: (config: Config, messageId: string) => void;
  readonly open: (config: Config) => Promise<Driven>;
  /** Whether the broker marks the message redelivered once its connection dropped (0-9-1 does). */
  readonly redeliveredAfterDrop?: boolean;
};

/** The cases of a contract suite that every transport passes alike: the queue deleted and the connection dropped. */
function itEndsWithItsQueueAndItsConnection(suite: Suite): void {
  it('ends taking with consumer-cancelled when the work queue is deleted mid-run, and closes', async () => {
    // Prepare
    const config = suite.configOf();
    await setUpTopology(suite.broker(), config);
    suite.publish(config, 'only');
    const driven = await suite.open(config);

    // Act
    const after = await takeAfterQueueDeleted(driven, suite.broker(), config.workQueue);

    // Assess
    expect(after).toEqual({ next: undefined, ended: 'consumer-cancelled', lost: false });
    await expect(driven.transport.close()).resolves.toBeUndefined();
  });

  it('counts itself lost when the connection drops: failed says connection-lost, the message is back in the queue and close still works', async () => {
    // Prepare
    const config = suite.configOf({ AMQP_URL: suite.proxy().url(AMQP_URL) });
    await setUpTopology(suite.broker(), config);
    suite.publish(config, 'cut');
    const { transport } = await suite.open(config);

    // Act
    const { reason, error, back } = await cutAfterTake(transport, suite.proxy(), config.workQueue);

    // Assess
    expect(reason).toBe('connection-lost');
    expect(error).toMatchObject({ name: 'PullAbortedError', reason: 'connection-lost' });
    expect(back.map((a) => a.message.properties.messageId)).toEqual(['cut']);
    // Unlike a release, a delivery lost with its connection counts toward a quorum queue's delivery limit, on every version.
    expect(back[0]?.message.properties.headers?.['x-delivery-count']).toBe(1);
    if (suite.redeliveredAfterDrop === true) expect(back[0]?.message.fields.redelivered).toBe(true);
  });
}

/** The taken message whose `messageId` is `id`. */
function byId(taken: readonly Taken[], id: string): Taken {
  const found = taken.find((t) => t.delivery.properties.messageId === id);
  if (found === undefined) throw new Error(`no message ${id} was taken`);
  return found;
}

const FACTS: ErrorFacts = Object.freeze({ name: 'PartnerError', message: 'partner down', retryable: true, retryAfterMs: undefined });

/** One verdict of each kind, as the lifecycle writes them. */
const verdicts = {
  ack: { kind: 'ack', unkeyed: false },
  duplicate: { kind: 'duplicate' },
  retry: (delayMs: number, retryNo = 0): Verdict => ({ kind: 'retry', retryNo, nextRetryNo: retryNo + 1, delayMs, error: FACTS }),
  park: (copyable = true, retryNo = 2): Verdict => ({
    kind: 'park',
    retryNo,
    reason: 'retries exhausted: 2 of 2 made',
    error: FACTS,
    stack: 'PartnerError: partner down\n    at contract',
    copyable,
  }),
  defer: (delayMs: number, retryNo = 1): Verdict => ({ kind: 'defer', retryNo, delayMs, why: { ...FACTS, name: 'BreakerOpenError', message: 'breaker open' } }),
  giveBack: { kind: 'give-back', why: 'out-of-time' },
} as const satisfies Record<string, Verdict | ((...args: never[]) => Verdict)>;

type Arrival = { readonly message: ConsumeMessage; readonly raw: ReadonlyMap<string, Buffer>; readonly at: number };

/**
 * Consumes from `queue` on a connection of its own until `count` messages arrived, each with its
 * header table byte for byte and the time it arrived; also returns any that arrived before the
 * consumer's cancel was confirmed, so a caller sees one too many. Rejects after `timeoutMs` naming how
 * many came. No acks: a quorum queue may drop an ack sent just before the close (rabbitmq-server#10327).
 */
async function awaitArrivals(queue: string, count: number, timeoutMs = 10_000): Promise<Arrival[]> {
  const connection = await amqp.connect(AMQP_URL, { noDelay: true });
  const tap = tapRawHeaders(connection);
  const arrived: Arrival[] = [];
  try {
    const channel = await connection.createChannel();
    let consumerTag: string | undefined;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${arrived.length} of ${count} messages arrived in ${queue} within ${timeoutMs} ms`)), timeoutMs);
      channel
        .consume(
          queue,
          (message) => {
            if (message === null) return;
            // amqplib hands a delivery on as soon as its body frame is read: the last header table read is its own.
            arrived.push({ message, raw: tap.last(), at: Date.now() });
            if (arrived.length === count) {
              clearTimeout(timer);
              resolve();
            }
          },
          { noAck: true },
        )
        .then((ok) => {
          consumerTag = ok.consumerTag;
        }, reject);
    });
    if (consumerTag !== undefined) await channel.cancel(consumerTag);
    return arrived;
  } finally {
    await connection.close();
  }
}

/** The message as it reads after the broker took it from amqplib: published to a queue of its own and consumed back. */
async function asPublished(broker: TestBroker, content: Buffer, options: Options.Publish): Promise<Arrival> {
  const queue = uniqueName('reference');
  broker.trackQueue(queue);
  await broker.channel.assertQueue(queue, { durable: false });
  broker.channel.sendToQueue(queue, content, options);
  const [arrival] = await awaitArrivals(queue, 1);
  return arrival as Arrival;
}

/** The arrival whose `messageId` is `id`. */
function arrivalOf(arrivals: readonly Arrival[], id: string): Arrival {
  const found = arrivals.find((a) => a.message.properties.messageId === id);
  if (found === undefined) throw new Error(`message ${id} did not arrive`);
  return found;
}

/** The raw header entries named in `names`, as hex, for a byte-for-byte comparison. */
function rawHex(raw: ReadonlyMap<string, Buffer>, names: readonly string[]): Record<string, string | undefined> {
  return Object.fromEntries(names.map((name) => [name, raw.get(name)?.toString('hex')]));
}

export { arrivalOf, asPublished, awaitArrivals, byId, itEndsWithItsQueueAndItsConnection, openTransport, rawHex, takeCount, takeThenStop, verdicts };
