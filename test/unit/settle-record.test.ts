import { describe, expect, it } from 'vitest';
import type { RetryDecision } from '../../shared/retry/decide-retry.js';
import { decodeEvent, type EventRecord } from '../../shared/event/decode-event.js';
import { requeueEventRecord, settleEventVerdict } from '../../shared/event/settle-record.js';
import type { Verdict } from '../../shared/core/verdict.js';
import { PublishError } from '../../shared/errors.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { bytesOf, eventFor, fakeEventDeps, rmqMessage } from '../fixtures/events.js';
import type { PublishOutcome } from '../helpers/fakes.js';

const NOW = new Date('2026-11-22T10:00:00.000Z');

/** One record from queue `invoices` (not the work queue), and deps whose publisher follows `script`. */
function setUp(script: PublishOutcome[] = []) {
  const { deps, publisher, logger } = fakeEventDeps(script, () => NOW);
  const message = rmqMessage('{"invoice":1}', { messageId: 'inv-1', headers: { 'x-retry-no': bytesOf('1'), tenant: bytesOf('acme') } });
  const [record] = decodeEvent(eventFor({ invoices: [message] }), { workQueue: 'orders', parkingQueue: 'orders.parking' }) as [EventRecord];
  return { deps, publisher, logger, record };
}

const PARTNER_DOWN = { name: 'PartnerDown', message: 'HTTP 503', retryable: true, retryAfterMs: undefined };

/** The verdict a failed attempt (retry count 1) comes to under `decision`. */
function failure(decision: RetryDecision): Verdict {
  return decision.kind === 'retry'
    ? { kind: 'retry', retryNo: 1, nextRetryNo: decision.retryNo, delayMs: decision.delayMs, error: PARTNER_DOWN }
    : { kind: 'park', retryNo: 1, reason: decision.reason, error: PARTNER_DOWN, stack: undefined, copyable: true };
}

describe('settleEventVerdict', () => {
  it("publishes a retry copy with the count + 1 to the delay path of the message's own queue", async () => {
    // Prepare
    const { deps, publisher, record } = setUp();
    // Act
    const outcome = await settleEventVerdict(deps, record, failure({ kind: 'retry', retryNo: 2, delayMs: 4000 }));
    // Assess
    expect(outcome).toBe('retried');
    expect(publisher.calls).toHaveLength(1);
    expect(publisher.calls[0]).toMatchObject({ exchange: '', routingKey: 'invoices.delay.4000ms' });
    expect(publisher.calls[0]?.options.headers).toMatchObject({ 'x-retry-no': 2, tenant: 'acme', [BoomerangHeader.originalRoutingKey]: 'invoices' });
    expect(publisher.calls[0]?.content.toString()).toBe('{"invoice":1}');
  });

  it("parks into the queue's own parking lot, saying why and where from", async () => {
    // Prepare
    const { deps, publisher, logger, record } = setUp();
    // Act
    const outcome = await settleEventVerdict(deps, record, failure({ kind: 'park', reason: 'retries exhausted: 1 of 1 made' }));
    // Assess
    expect(outcome).toBe('parked');
    expect(publisher.calls[0]).toMatchObject({ exchange: '', routingKey: 'invoices.parked' });
    expect(publisher.calls[0]?.options.headers).toMatchObject({
      [BoomerangHeader.parkReason]: 'retries exhausted: 1 of 1 made',
      [BoomerangHeader.sourceQueue]: 'invoices',
      [BoomerangHeader.functionName]: 'boomerang-event',
      tenant: 'acme',
    });
    expect(logger.entries()).toMatchObject([{ level: 'warn', message: 'message parked', messageId: 'inv-1', parkingQueue: 'invoices.parked' }]);
  });

  it('parks a lean copy when the retry copy cannot be encoded (headers too large)', async () => {
    // Prepare
    const { deps, publisher, record } = setUp([new PublishError('headers too large', 'rejected-locally')]);
    // Act
    const outcome = await settleEventVerdict(deps, record, failure({ kind: 'retry', retryNo: 2, delayMs: 4000 }));
    // Assess
    expect(outcome).toBe('parked');
    expect(publisher.calls.map((c) => c.routingKey)).toEqual(['invoices.delay.4000ms', 'invoices.parked']);
    expect(publisher.calls[1]?.options.headers).not.toHaveProperty('tenant');
    expect(publisher.calls[1]?.options.headers?.[BoomerangHeader.parkReason]).toBe(
      'its retry copy could not be encoded; user headers dropped: too large to copy',
    );
  });

  it.each<PublishError['reason']>(['returned', 'nacked', 'timeout', 'channel-closed'])(
    'rejects when the copy is %s, and tries nothing else',
    async (reason) => {
      // Prepare
      const { deps, publisher, record } = setUp([new PublishError(`publish failed: ${reason}`, reason)]);
      // Act
      const outcome = settleEventVerdict(deps, record, failure({ kind: 'retry', retryNo: 2, delayMs: 4000 }));
      // Assess
      await expect(outcome).rejects.toMatchObject({ name: 'PublishError', reason });
      expect(publisher.calls).toHaveLength(1);
    },
  );
});

describe('requeueEventRecord', () => {
  it('sends the record to the tail of its queue with its count and failure times untouched', async () => {
    // Prepare
    const { deps, publisher, record } = setUp();
    // Act
    const outcome = await requeueEventRecord(deps, record, 1);
    // Assess
    expect(outcome).toBe('requeued');
    expect(publisher.calls[0]).toMatchObject({ exchange: '', routingKey: 'invoices' });
    const headers = publisher.calls[0]?.options.headers;
    expect(headers).toMatchObject({ 'x-retry-no': 1, tenant: 'acme' });
    expect(headers).not.toHaveProperty(BoomerangHeader.firstFailureAt);
    expect(headers).not.toHaveProperty(BoomerangHeader.lastFailureAt);
  });
});
