import type { Delivery, EventContext } from 'rhea';
import { afterAll, describe, expect, it } from 'vitest';
import { connectAmqp10 } from '../../shared/native/amqp10-connection.js';
import { type Amqp10Outcome, SettlementWriter } from '../../shared/native/settlement-writer.js';
import { AMQP_URL, sleep, TestBroker, uniqueName } from '../helpers/broker.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';

const VERSION = BROKER_VERSION;
const broker = await TestBroker.open();
if (!NATIVE_BROKER) await broker.close();

const DELAY_MS = 3000;
/** Long enough after the delay for a redelivery to arrive (they came 3.00-3.01 s after the settle). */
const WATCH_MS = DELAY_MS + 1500;

type Arrival = { readonly body: string; readonly atMs: number; readonly annotations: Record<string, unknown> };
type Settle = (first: Delivery, second: Delivery, retry: Amqp10Outcome & { kind: 'modified' }) => void;

/**
 * Publishes `first` and `second` to a fresh quorum queue with broker-side delayed retry, receives them
 * over AMQP 1.0 (consecutive delivery ids), lets `settle` settle both in one event-loop pass, then
 * records every redelivery (accepting it) for WATCH_MS.
 */
async function scenario(settle: Settle): Promise<{ redelivered: Arrival[]; retry: Amqp10Outcome & { kind: 'modified' } }> {
  const queue = uniqueName('native-merge');
  broker.trackQueue(queue);
  await broker.channel.assertQueue(queue, {
    durable: true,
    arguments: { 'x-queue-type': 'quorum', 'x-delayed-retry-type': 'failed', 'x-delayed-retry-min': 100, 'x-delayed-retry-max': 60_000 },
  });
  const publisher = await broker.connection.createConfirmChannel();
  for (const body of ['first', 'second']) publisher.sendToQueue(queue, Buffer.from(body), { persistent: true });
  await publisher.waitForConfirms();
  await publisher.close();
  const amqp10 = await connectAmqp10({ urls: [AMQP_URL], connectTimeoutMs: 5000, connectionName: queue });
  let retry: Amqp10Outcome & { kind: 'modified' } = { kind: 'modified', deliveryFailed: true, undeliverableHere: false, annotations: {} };
  const redelivered: Arrival[] = [];
  const received: Delivery[] = [];
  let settledAt = 0;
  const receiver = amqp10.connection.open_receiver({ source: { address: `/queues/${encodeURIComponent(queue)}` }, autoaccept: false, credit_window: 10 });
  receiver.on('message', (context: EventContext) => {
    const delivery = context.delivery as Delivery;
    if (settledAt > 0) {
      redelivered.push({ body: bodyOf(context.message?.body), atMs: Date.now() - settledAt, annotations: { ...context.message?.message_annotations } });
      delivery.accept();
      return;
    }
    received.push(delivery);
    if (received.length < 2) return;
    const [first, second] = received as [Delivery, Delivery];
    expect(second.id, 'delivery ids are consecutive').toBe(first.id + 1);
    settledAt = Date.now();
    retry = { ...retry, annotations: { 'x-opt-delivery-time': settledAt + DELAY_MS, 'x-opt-test-note': 'retry' } };
    settle(first, second, retry);
  });
  for (let waited = 0; settledAt === 0 && waited < 5000; waited += 25) await sleep(25);
  expect(settledAt, 'both messages were received').toBeGreaterThan(0);
  await sleep(WATCH_MS);
  await amqp10.close();
  return { redelivered, retry };
}

function bodyOf(body: unknown): string {
  const bytes = (body as { content?: unknown } | undefined)?.content ?? body;
  return Buffer.isBuffer(bytes) ? bytes.toString() : String(bytes);
}

// Each scenario has its own queue and connection and spends most of its time waiting out the delay: they run side by side.
describe.runIf(NATIVE_BROKER)(`rhea 3.0.5 disposition merge on RabbitMQ ${VERSION}`, { concurrent: true }, () => {
  afterAll(() => broker.close());

  // If one of these two fails, rhea merges settlements correctly now: SettlementWriter may go.
  it("raw rhea: a success settled in the same pass right after a retry is retried with the retry's annotations", async () => {
    // Act
    const { redelivered, retry } = await scenario((first, second, planned) => {
      first.modified({ delivery_failed: true, undeliverable_here: false, message_annotations: { ...planned.annotations } });
      second.accept();
    });

    // Assess
    expect(redelivered.map((r) => r.body).sort()).toEqual(['first', 'second']);
    const second = redelivered.find((r) => r.body === 'second');
    expect(second?.annotations).toMatchObject({ ...retry.annotations, 'x-delivery-count': 1 });
  });

  it('raw rhea: a retry settled in the same pass right after a success is accepted (the retry is lost)', async () => {
    // Act
    const { redelivered } = await scenario((first, second, planned) => {
      first.accept();
      second.modified({ delivery_failed: true, undeliverable_here: false, message_annotations: { ...planned.annotations } });
    });

    // Assess
    expect(redelivered).toEqual([]);
  });

  it.each([
    { order: 'retry, then success', retried: 'first', outcomes: (retry: Amqp10Outcome): Amqp10Outcome[] => [retry, { kind: 'accepted' }] },
    { order: 'success, then retry', retried: 'second', outcomes: (retry: Amqp10Outcome): Amqp10Outcome[] => [{ kind: 'accepted' }, retry] },
  ])('SettlementWriter ($order): the success never comes back, the retry comes back after its delay with its annotations', async ({ retried, outcomes }) => {
    // Act
    const writer = new SettlementWriter();
    const { redelivered, retry } = await scenario((first, second, planned) => {
      const [a, b] = outcomes(planned) as [Amqp10Outcome, Amqp10Outcome];
      writer.settle(first, a);
      writer.settle(second, b);
    });

    // Assess
    expect(redelivered.map((r) => r.body)).toEqual([retried]);
    expect(redelivered[0]?.atMs).toBeGreaterThanOrEqual(DELAY_MS - 50);
    expect(redelivered[0]?.annotations).toMatchObject({ ...retry.annotations, 'x-delivery-count': 1 });
  });
});
