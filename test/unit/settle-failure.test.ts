import { describe, expect, it } from 'vitest';
import type { AckOrder } from '../../shared/config/config.js';
import type { RetryDecision } from '../../shared/retry/decide-retry.js';
import { DeliveryLedger } from '../../shared/pull/delivery-ledger.js';
import { settleFailure, type PullSettleDeps, type Failure } from '../../shared/pull/settle-failure.js';
import { NOT_TRIED } from '../../shared/core/recorded-failures.js';
import { PublishError } from '../../shared/errors.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { Tally } from '../../shared/core/tally.js';
import { FakeChannel, fakeDelivery, FakePublisher, recordingLogger, type PublishOutcome } from '../helpers/fakes.js';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const RETRY: RetryDecision = { kind: 'retry', retryNo: 3, delayMs: 4000 };
const PARK: RetryDecision = { kind: 'park', reason: 'retries exhausted: 5 of 5 made' };

/** A `defer` verdict as pull settles it (the pull transport, pull/pull.ts): a never-tried delivery to the delay path with the count it came with. */
function deferUntried(deps: PullSettleDeps, delivery: Failure['delivery'], retryNo: number, delayMs: number): Promise<void> {
  return settleFailure(deps, { delivery, retryNo, error: NOT_TRIED, stack: undefined, decision: { kind: 'retry', retryNo, delayMs }, deferred: true });
}

/** A ledger holding one open delivery, and deps whose publisher follows `script`. */
function setUp(options: { ackOrder?: AckOrder; script?: PublishOutcome[]; headers?: Record<string, unknown> } = {}) {
  const events: string[] = [];
  const channel = new FakeChannel(events);
  const publisher = new FakePublisher(options.script, events);
  const tally = new Tally();
  const summary = tally.current;
  // Acks go out as soon as they are made, so the event log shows them next to their publish.
  const ledger = new DeliveryLedger(channel.asChannel(), tally, (send) => send());
  const logger = recordingLogger();
  const copyFailures: Error[] = [];
  const retryDelays: number[] = [];
  const deps: PullSettleDeps = {
    publisher,
    ledger,
    log: logger.log,
    delayRoute: (delayMs) => ({ exchange: 'boomerang.delay', routingKey: `level.${delayMs}`, delayMs }),
    ackOrder: options.ackOrder ?? 'publish-then-ack',
    retryHeader: 'x-retry-no',
    queue: 'orders',
    parkingQueue: 'orders.parked',
    functionName: 'boomerang-pull',
    now: () => NOW,
    onCopyFailed: (error) => copyFailures.push(error),
    metrics: { handlerError: () => undefined, retryDelay: (delayMs) => retryDelays.push(delayMs), flush: () => undefined },
  };
  const delivery = fakeDelivery({ headers: options.headers ?? { tenant: 'acme', 'x-retry-no': 2 } });
  ledger.received(delivery);
  return { deps, events, channel, publisher, summary, ledger, logger, copyFailures, delivery, retryDelays };
}

function failure(delivery: Failure['delivery'], decision: RetryDecision): Failure {
  return {
    delivery,
    retryNo: 2,
    error: { name: 'PartnerDown', message: 'HTTP 503', retryable: true, retryAfterMs: undefined },
    stack: 'PartnerDown: HTTP 503\n    at handler',
    decision,
  };
}

const rejection = (reason: PublishError['reason']): PublishError => new PublishError(`publish failed: ${reason}`, reason);

describe('settleFailure', () => {
  describe('with ACK_ORDER=publish-then-ack', () => {
    it('publishes a retry copy to the delay route, then acks, when the decision is retry', async () => {
      // Prepare
      const { deps, events, publisher, summary, delivery } = setUp();
      // Act
      await settleFailure(deps, failure(delivery, RETRY));
      // Assess
      expect(events).toEqual(['publish boomerang.delay/level.4000', 'confirm', 'ack']);
      expect(publisher.calls).toHaveLength(1);
      expect(publisher.calls[0]?.content).toBe(delivery.content);
      expect(publisher.calls[0]?.options.headers).toMatchObject({ 'x-retry-no': 3, tenant: 'acme' });
      expect(summary).toMatchObject({ retried: 1, parked: 0, requeued: 0, lost: 0 });
    });

    it('tells the metrics the delay the retry copy waits, and logs the retry at debug', async () => {
      // Prepare
      const { deps, delivery, retryDelays, logger } = setUp({ headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
      // Act
      await settleFailure(deps, failure(delivery, RETRY));
      // Assess
      expect(retryDelays).toEqual([4000]);
      expect(logger.entries()).toContainEqual(
        expect.objectContaining({
          level: 'debug',
          message: 'message retried',
          messageId: 'm-1',
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
          waitMs: 4000,
        }),
      );
    });

    it('publishes a parked copy to the parking queue, then acks, when the decision is park', async () => {
      // Prepare
      const { deps, events, publisher, summary, delivery } = setUp();
      // Act
      await settleFailure(deps, failure(delivery, PARK));
      // Assess
      expect(events).toEqual(['publish /orders.parked', 'confirm', 'ack']);
      expect(publisher.calls[0]?.options.headers).toMatchObject({
        tenant: 'acme',
        'x-retry-no': 2,
        [BoomerangHeader.parkReason]: PARK.kind === 'park' ? PARK.reason : '',
        [BoomerangHeader.errorName]: 'PartnerDown',
        [BoomerangHeader.errorMessage]: 'HTTP 503',
        [BoomerangHeader.attempts]: 3,
        [BoomerangHeader.sourceQueue]: 'orders',
        [BoomerangHeader.functionName]: 'boomerang-pull',
        [BoomerangHeader.parkedAt]: NOW.toISOString(),
      });
      expect(summary).toMatchObject({ retried: 0, parked: 1, requeued: 0, lost: 0 });
    });

    it.each(['returned', 'nacked', 'timeout', 'channel-closed'] as const)(
      'requeues the original and reports the failure when the publish is %s',
      async (reason) => {
        // Prepare
        const error = rejection(reason);
        const { deps, channel, publisher, summary, copyFailures, logger, delivery } = setUp({ script: [error] });
        // Act
        await settleFailure(deps, failure(delivery, RETRY));
        // Assess
        expect(publisher.calls).toHaveLength(1);
        expect(channel.acks).toEqual([]);
        expect(channel.nacks).toEqual([{ message: delivery, allUpTo: false, requeue: true }]);
        expect(summary).toMatchObject({ retried: 0, parked: 0, requeued: 1 });
        expect(copyFailures).toEqual([error]);
        expect(logger.entries()).toContainEqual(expect.objectContaining({ level: 'warn', reason: error.message }));
      },
    );

    it('parks a lean copy without user headers when the copy is rejected locally', async () => {
      // Prepare
      const { deps, channel, publisher, summary, copyFailures, delivery } = setUp({ script: [rejection('rejected-locally')] });
      // Act
      await settleFailure(deps, failure(delivery, RETRY));
      // Assess
      expect(publisher.calls.map((c) => `${c.exchange}/${c.routingKey}`)).toEqual(['boomerang.delay/level.4000', '/orders.parked']);
      const headers = publisher.calls[1]?.options.headers ?? {};
      expect(headers).not.toHaveProperty('tenant');
      expect(headers[BoomerangHeader.parkReason]).toContain('user headers dropped');
      expect(channel.acks).toEqual([delivery]);
      expect(summary).toMatchObject({ retried: 0, parked: 1, requeued: 0 });
      expect(copyFailures).toEqual([]);
    });

    it('requeues the original when the lean copy fails too', async () => {
      // Prepare
      const { deps, channel, summary, copyFailures, delivery } = setUp({ script: [rejection('rejected-locally'), rejection('timeout')] });
      // Act
      await settleFailure(deps, failure(delivery, PARK));
      // Assess
      expect(channel.acks).toEqual([]);
      expect(summary).toMatchObject({ parked: 0, requeued: 1 });
      expect(copyFailures).toHaveLength(1);
    });

    it('does not settle twice when the original was requeued before the confirm came', async () => {
      // Prepare
      const { deps, channel, summary, ledger, delivery } = setUp();
      // Act
      const disposing = settleFailure(deps, failure(delivery, RETRY));
      ledger.requeueAll();
      await disposing;
      // Assess
      expect(channel.acks).toEqual([]);
      expect(channel.nacks).toHaveLength(1);
      expect(summary).toMatchObject({ retried: 0, requeued: 1 });
    });
  });

  describe('deferUntried (the breaker opened)', () => {
    it('sends the untried message to the delay path with the count it came with, then acks it as deferred', async () => {
      // Prepare
      const { deps, events, publisher, summary, delivery, retryDelays } = setUp();
      // Act
      await deferUntried(deps, delivery, 2, 2000);
      // Assess
      expect(events).toEqual(['publish boomerang.delay/level.2000', 'confirm', 'ack']);
      expect(publisher.calls[0]?.options.headers).toMatchObject({ 'x-retry-no': 2, tenant: 'acme' });
      expect(summary).toMatchObject({ deferred: 1, retried: 0, parked: 0, requeued: 0 });
      expect(retryDelays).toEqual([]);
    });

    it('keeps the failure times the message had, and adds none to one that never failed', async () => {
      // Prepare
      const earlier = '2026-11-21T08:00:00.000Z';
      const failedBefore = setUp({ headers: { 'x-retry-no': 1, [BoomerangHeader.firstFailureAt]: earlier, [BoomerangHeader.lastFailureAt]: earlier } });
      const neverFailed = setUp({ headers: {} });
      // Act
      await deferUntried(failedBefore.deps, failedBefore.delivery, 1, 1000);
      await deferUntried(neverFailed.deps, neverFailed.delivery, 0, 1000);
      // Assess
      expect(failedBefore.publisher.calls[0]?.options.headers).toMatchObject({
        [BoomerangHeader.firstFailureAt]: earlier,
        [BoomerangHeader.lastFailureAt]: earlier,
      });
      expect(neverFailed.publisher.calls[0]?.options.headers).not.toHaveProperty(BoomerangHeader.firstFailureAt);
      expect(neverFailed.publisher.calls[0]?.options.headers).not.toHaveProperty(BoomerangHeader.lastFailureAt);
    });

    it('requeues the original when the deferred copy is not confirmed', async () => {
      // Prepare
      const { deps, channel, summary, delivery, copyFailures } = setUp({ script: [rejection('returned')] });
      // Act
      await deferUntried(deps, delivery, 2, 2000);
      // Assess
      expect(channel.nacks).toEqual([{ message: delivery, allUpTo: false, requeue: true }]);
      expect(summary).toMatchObject({ deferred: 0, requeued: 1 });
      expect(copyFailures).toHaveLength(1);
    });

    it('with ack-then-publish, parks the message when its deferred copy fails', async () => {
      // Prepare
      const { deps, publisher, summary, delivery } = setUp({ ackOrder: 'ack-then-publish', script: [rejection('returned')] });
      // Act
      await deferUntried(deps, delivery, 2, 2000);
      // Assess
      expect(publisher.calls[1]?.routingKey).toBe('orders.parked');
      expect(publisher.calls[1]?.options.headers?.[BoomerangHeader.errorName]).toBe('CircuitBreakerOpen');
      expect(summary).toMatchObject({ deferred: 0, parked: 1, lost: 0 });
    });
  });

  describe('with ACK_ORDER=ack-then-publish', () => {
    it('acks before the publish is confirmed and counts the retry once confirmed', async () => {
      // Prepare
      const { deps, events, summary, delivery } = setUp({ ackOrder: 'ack-then-publish' });
      // Act
      await settleFailure(deps, failure(delivery, RETRY));
      // Assess
      expect(events).toEqual(['ack', 'publish boomerang.delay/level.4000', 'confirm']);
      expect(summary).toMatchObject({ retried: 1, parked: 0, lost: 0 });
    });

    it('gives back, unacked and unpublished, a message over MAX_MESSAGE_BYTES: no copy of it could be sent', async () => {
      // Prepare: the body {"orderId":42} is 14 bytes
      const { deps, events, summary, copyFailures, delivery } = setUp({ ackOrder: 'ack-then-publish' });
      // Act
      await settleFailure({ ...deps, maxMessageBytes: 13 }, failure(delivery, RETRY));
      // Assess
      expect(events).toEqual(['nack']);
      expect(summary).toMatchObject({ requeued: 1, retried: 0, parked: 0, lost: 0 });
      expect(copyFailures.map((e) => [(e as PublishError).reason, e.message])).toEqual([
        ['too-large', 'the body is 14 bytes, over MAX_MESSAGE_BYTES (13): no copy is sent to exchange "boomerang.delay" with key "level.4000"'],
      ]);
    });

    it('falls back to the parking lot when the retry copy fails', async () => {
      // Prepare
      const { deps, channel, publisher, summary, copyFailures, delivery } = setUp({ ackOrder: 'ack-then-publish', script: [rejection('returned')] });
      // Act
      await settleFailure(deps, failure(delivery, RETRY));
      // Assess
      expect(publisher.calls.map((c) => `${c.exchange}/${c.routingKey}`)).toEqual(['boomerang.delay/level.4000', '/orders.parked']);
      expect(publisher.calls[1]?.options.headers?.[BoomerangHeader.parkReason]).toContain('its retry copy could not be published');
      expect(channel.acks).toEqual([delivery]);
      expect(summary).toMatchObject({ retried: 0, parked: 1, lost: 0 });
      expect(copyFailures).toEqual([]);
    });

    it('counts the message lost and logs an error when no copy can be published', async () => {
      // Prepare
      const { deps, channel, summary, logger, delivery, publisher, copyFailures } = setUp({
        ackOrder: 'ack-then-publish',
        script: [rejection('returned'), rejection('timeout'), rejection('nacked')],
      });
      // Act
      await settleFailure(deps, failure(delivery, RETRY));
      // Assess: the retry copy, a full parked copy, then a lean one were tried
      expect(publisher.calls).toHaveLength(3);
      expect(copyFailures).toHaveLength(1);
      expect(channel.acks).toEqual([delivery]);
      expect(summary).toMatchObject({ retried: 0, parked: 0, lost: 1 });
      const errors = logger.entries().filter((e) => e.level === 'error');
      expect(errors).toEqual([expect.objectContaining({ message: expect.stringContaining('message lost'), messageId: 'm-1', errorName: 'PartnerDown' })]);
    });

    it('publishes nothing when the delivery was already settled', async () => {
      // Prepare
      const { deps, publisher, summary, ledger, delivery } = setUp({ ackOrder: 'ack-then-publish' });
      ledger.requeue(delivery);
      // Act
      await settleFailure(deps, failure(delivery, RETRY));
      // Assess
      expect(publisher.calls).toEqual([]);
      expect(summary).toMatchObject({ retried: 0, requeued: 1 });
    });

    // Regression: the lean fallback was once tried only for retry copies, so an oversized parked copy
    // was counted lost although a lean copy would fit.
    it('parks a lean copy when a parked copy is rejected locally', async () => {
      // Prepare
      const { deps, publisher, summary, delivery } = setUp({ ackOrder: 'ack-then-publish', script: [rejection('rejected-locally')] });
      // Act
      await settleFailure(deps, failure(delivery, PARK));
      // Assess
      expect(publisher.calls).toHaveLength(2);
      expect(publisher.calls[1]?.options.headers).not.toHaveProperty('tenant');
      expect(summary).toMatchObject({ parked: 1, lost: 0 });
    });
  });
});
