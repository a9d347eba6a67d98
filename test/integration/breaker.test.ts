import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createWebhookDelivery } from '../../shared/examples/webhooks/webhook-delivery.js';
import { topologyOptionsFromConfig, type Config } from '../../shared/config/config.js';
import { startFlakyProvider, type FlakyProvider } from '../../shared/demo/flaky-provider.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import type { Handler } from '../../shared/message/message.js';
import type { Summary } from '../../shared/observability/summary.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { sleep, TestBroker } from '../helpers/broker.js';
import { publishJson, pullOnce, pullUntil, setUpTopology, testConfig, total } from '../helpers/engine.js';

/** Every message the test published is somewhere: work queue, a delay queue or the parking lot. */
async function messagesInFlight(broker: TestBroker, config: Config): Promise<number> {
  const plan = buildTopologyPlan(topologyOptionsFromConfig(config));
  let count = 0;
  for (const queue of plan.queues) count += await broker.messageCount(queue.name);
  return count;
}

/** The invariant every summary keeps. */
function expectBalanced(summary: Summary): void {
  const { received, acked, retried, parked, requeued, lost, deferred } = summary;
  expect(received).toBe(acked + retried + parked + requeued + lost + deferred);
}

describe('circuit breaker on the broker, against the flaky provider', () => {
  let broker: TestBroker;
  let provider: FlakyProvider;
  const handler: Handler = createWebhookDelivery({ httpTimeoutMs: 2000 });

  beforeEach(async () => {
    broker = await TestBroker.open();
    provider = await startFlakyProvider({ failureRate: 0 });
  });

  afterEach(async () => {
    await provider.close();
    await broker.close();
  });

  async function publishWebhooks(config: Config, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      publishJson(broker, config.workQueue, { url: `${provider.url}/hooks/${i}`, headers: { 'x-demo-id': `order-${i}` } }, { messageId: `order-${i}` });
    }
    // Wait until the broker has them all, so the first invocation sees the whole batch.
    await broker.holds(config.workQueue, count);
  }

  it('with the partner down, calls it exactly BREAKER_THRESHOLD times per invocation, sends the rest back untried and parks nothing early', async () => {
    // Prepare
    const config = testConfig({ BREAKER_THRESHOLD: '5', CONCURRENCY: '8', MAX_RETRIES: '10', BACKOFF_MAX_MS: '400' });
    await setUpTopology(broker, config);
    await publishWebhooks(config, 30);
    provider.setDown(true);

    // Act: three invocations while the partner is down
    const requestsPerInvocation: number[] = [];
    const summaries: Summary[] = [];
    for (let i = 0; i < 3; i++) {
      const before = provider.stats().requests;
      summaries.push(await pullOnce(config, handler));
      requestsPerInvocation.push(provider.stats().requests - before);
      // The schedule's gap between invocations: the retry copies (200-400 ms) come back in it.
      await sleep(450);
    }

    // Assess
    expect(requestsPerInvocation).toEqual([5, 5, 5]);
    const [first] = summaries as [Summary];
    expect(first).toMatchObject({ retried: 5, acked: 0, parked: 0, breakerOpened: true, stoppedBecause: 'breaker-open' });
    // Every untried message is sent back: deferred where a give-back counts (before 4.3), else given
    // back as it was. On a busy machine a retry copy (200 ms) can come back within the invocation:
    // deferred too when it arrives before the breaker opens, else given back untouched.
    if (broker.giveBackCounts) expect(first.deferred).toBeGreaterThanOrEqual(25);
    else {
      expect(first.deferred).toBe(0);
      expect(first.requeued).toBeGreaterThanOrEqual(25);
    }
    for (const summary of summaries) expectBalanced(summary);
    expect(total(summaries).parked).toBe(0);
    expect(await messagesInFlight(broker, config)).toBe(30);

    // Act: the partner comes back; invocations go on until every message was delivered
    provider.setDown(false);
    const after = await pullUntil(config, handler, () => provider.stats().distinctIdsSucceeded === 30);

    // Assess: nothing lost, nothing parked, and the deferred ones did not spend an attempt
    expect(total(after).parked).toBe(0);
    expect(await broker.messageCount(config.parkingQueue)).toBe(0);
    expect(provider.stats().distinctIdsSucceeded).toBe(30);
    expect(after.every((s) => !s.breakerOpened)).toBe(true);
  });

  it('keeps the retry count of a message the breaker sent back: it was not tried', async () => {
    // Prepare: the first message fails (opens the breaker at threshold 1), the second is deferred
    const config = testConfig({ BREAKER_THRESHOLD: '1', MAX_RETRIES: '3', BACKOFF_INITIAL_MS: '5000', BACKOFF_MAX_MS: '5000' });
    await setUpTopology(broker, config);
    publishJson(broker, config.workQueue, { n: 1 }, { messageId: 'tried', headers: { 'x-retry-no': 2 } });
    publishJson(broker, config.workQueue, { n: 2 }, { messageId: 'deferred', headers: { 'x-retry-no': 2, traceparent: '00-abc-def-01' } });
    await broker.holds(config.workQueue, 2);
    const failing: Handler = () => {
      throw new Error('partner down');
    };

    // Act
    const summary = await pullOnce(config, failing);
    // Deferred to the delay path before 4.3, given back to the work queue on 4.3
    const counts = broker.giveBackCounts;
    const delayed = await broker.drain(`${config.workQueue}.delay.5000ms`, counts ? 2 : 1);
    const back = counts ? [] : await broker.drain(config.workQueue, 1);

    // Assess
    expect(summary).toMatchObject({ received: 2, retried: 1, deferred: counts ? 1 : 0, requeued: counts ? 0 : 1, breakerOpened: true });
    const byId = new Map([...delayed, ...back].map((m) => [m.properties.messageId as string, m.properties.headers ?? {}]));
    expect(byId.get('tried')?.['x-retry-no']).toBe(3);
    expect(byId.get('deferred')?.['x-retry-no']).toBe(2);
    expect(byId.get('deferred')?.traceparent).toBe('00-abc-def-01');
    expect(byId.get('deferred')).not.toHaveProperty(BoomerangHeader.lastFailureAt);
  });

  it.each([
    ['never opens when fewer messages than the threshold fail', '10', 3],
    ['with BREAKER_THRESHOLD=0 tries every message, as before the breaker existed', '0', 20],
  ])('%s', async (_name, threshold, messages) => {
    // Prepare: retries wait 5 s, so none comes back (and is tried again) within the invocation
    const config = testConfig({ BREAKER_THRESHOLD: threshold, BACKOFF_INITIAL_MS: '5000', BACKOFF_MAX_MS: '5000' });
    await setUpTopology(broker, config);
    await publishWebhooks(config, messages);
    provider.setDown(true);

    // Act
    const summary = await pullOnce(config, handler);

    // Assess
    expect(provider.stats().requests).toBe(messages);
    expect(summary).toMatchObject({ received: messages, retried: messages, deferred: 0, breakerOpened: false, stoppedBecause: 'idle' });
  });

  it('closes on the first success and then runs at full concurrency; a success resets the run of failures', async () => {
    // Prepare: every third request fails, so there are never 3 failures in a row
    const config = testConfig({ BREAKER_THRESHOLD: '3', CONCURRENCY: '4', BACKOFF_INITIAL_MS: '5000', BACKOFF_MAX_MS: '5000' });
    await setUpTopology(broker, config);
    await publishWebhooks(config, 24);
    let calls = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    const mixed: Handler = async () => {
      const call = ++calls;
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await sleep(10);
      inFlight--;
      if (call % 3 === 0) throw new Error('flaky');
    };

    // Act
    const summary = await pullOnce(config, mixed);

    // Assess
    expect(summary).toMatchObject({ received: 24, breakerOpened: false, deferred: 0 });
    expect(summary.acked + summary.retried).toBe(24);
    expect(mostInFlight).toBe(4);
  });

  // Regression: the deferred originals were acked one by one after the consumer's cancel, and the
  // quorum queue dropped some of those acks when the channel closed: 203 and 217 messages for 200.
  it('leaves no duplicate after deferring a full prefetch window of 200 messages', async () => {
    // Prepare
    const config = testConfig({ BREAKER_THRESHOLD: '2', BATCH_SIZE: '200', BACKOFF_INITIAL_MS: '5000', BACKOFF_MAX_MS: '5000' });
    await setUpTopology(broker, config);
    for (let i = 0; i < 200; i++) publishJson(broker, config.workQueue, { i, pad: 'x'.repeat(2000) });
    await broker.holds(config.workQueue, 200);

    // The breaker opens on the second failure: what has been delivered by then is deferred, what
    // arrives later is requeued. Fail only once the broker has handed out the whole window, so the
    // deferred part does not depend on how fast deliveries arrive (under load, on 4.3.6, none had).
    let undelivered: string | undefined;
    const failOnceAllDelivered: Handler = async () => {
      const deadline = Date.now() + 4000; // within the invocation's budget (5 s)
      for (let ready = await broker.messageCount(config.workQueue); ready > 0; ready = await broker.messageCount(config.workQueue)) {
        if (Date.now() > deadline) {
          undelivered = `${config.workQueue} still held ${ready} ready messages after 4000 ms: the window was never all delivered`;
          break;
        }
        await sleep(10);
      }
      throw new Error('partner down');
    };

    // Act
    const summary = await pullOnce(config, failOnceAllDelivered);

    // Assess
    expect(undelivered).toBeUndefined();
    // Deliveries that arrive while the deferred copies settle go back untouched (requeued).
    expect(summary).toMatchObject({ retried: 2, acked: 0, parked: 0 });
    expect(summary.deferred + summary.requeued).toBe(summary.received - 2);
    // Deferred (a copy each) where a give-back counts, before 4.3; given back as they were on 4.3
    if (broker.giveBackCounts) expect(summary.deferred).toBeGreaterThan(0);
    else expect(summary.deferred).toBe(0);
    // The queue gives back what the closed consumer held (a dropped ack's duplicate among it) as it removes the consumer.
    await vi.waitFor(async () => expect((await broker.channel.checkQueue(config.workQueue)).consumerCount, `consumers on ${config.workQueue}`).toBe(0), {
      timeout: 5000,
      interval: 10,
    });
    expect(await messagesInFlight(broker, config)).toBe(200);
  });

  it('with MAX_RETRIES=0 (no delay path) gives the untried messages back to the work queue', async () => {
    // Prepare
    const config = testConfig({ BREAKER_THRESHOLD: '2', MAX_RETRIES: '0' });
    await setUpTopology(broker, config);
    await publishWebhooks(config, 6);
    provider.setDown(true);

    // Act
    const summary = await pullOnce(config, handler);

    // Assess: two tried and parked (no retries allowed), four untouched
    expect(provider.stats().requests).toBe(2);
    expect(summary).toMatchObject({ parked: 2, deferred: 0, breakerOpened: true });
    expect(summary.requeued).toBe(summary.received - 2);
    // The broker puts them back as it handles the nacks (or the channel's close).
    await broker.holds(config.workQueue, 4);
    expect(await broker.messageCount(config.workQueue)).toBe(4);
  });
});
