import { describe, expect, it } from 'vitest';
import { pauseMarkerArguments, pauseMarkerMessage, pauseMarkerQueue, pausedUntilOf } from '../../shared/amqp/pause-marker.js';

const NOW = Date.parse('2026-05-01T12:00:00.000Z');

describe('pauseMarkerQueue', () => {
  it('sits beside the work queue', () => {
    expect(pauseMarkerQueue('orders')).toBe('orders.pause');
  });
});

describe('pauseMarkerArguments', () => {
  it('keeps one durable classic message at a time, the newest, and lets the broker delete the queue after a day unused', () => {
    expect(pauseMarkerArguments()).toEqual({ 'x-max-length': 1, 'x-overflow': 'drop-head', 'x-expires': 86_400_000, 'x-queue-type': 'classic' });
  });

  it('is the same on every call (another value would make the broker refuse the declare)', () => {
    expect(pauseMarkerArguments()).toEqual(pauseMarkerArguments());
  });
});

describe('pauseMarkerMessage', () => {
  it('lives as long as the pause and says until when, why and who, in JSON', () => {
    // Act
    const message = pauseMarkerMessage(
      { untilMs: NOW + 60_000, queue: 'orders', errorName: 'PartnerRateLimitedError', messageId: undefined },
      'orders-pull',
      NOW,
    );
    // Assess
    expect(message?.ttlMs).toBe(60_000);
    expect(JSON.parse(message?.content.toString() ?? '')).toEqual({
      pausedUntil: '2026-05-01T12:01:00.000Z',
      untilMs: NOW + 60_000,
      reason: 'PartnerRateLimitedError',
      by: 'orders-pull',
      at: '2026-05-01T12:00:00.000Z',
    });
  });

  it.each([
    ['rounds a fraction of a millisecond up, never ending the pause early', NOW + 1500.2, 1501],
    ['is not written for a pause already over', NOW, undefined],
    ['is not written for a pause in the past', NOW - 1, undefined],
  ])('%s', (_name, untilMs, ttlMs) => {
    expect(pauseMarkerMessage({ untilMs, queue: 'q', errorName: 'E', messageId: undefined }, 'f', NOW)?.ttlMs).toBe(ttlMs);
  });
});

describe('pausedUntilOf', () => {
  it('reads back what pauseMarkerMessage wrote', () => {
    const message = pauseMarkerMessage({ untilMs: NOW + 5000, queue: 'q', errorName: 'E', messageId: undefined }, 'f', NOW);
    expect(pausedUntilOf(message!.content, NOW + 1000)).toBe(NOW + 5000);
  });

  it.each([
    ['a pause already over', '{"untilMs":1000}'],
    ['a body that is not JSON', 'paused!'],
    ['JSON without untilMs', '{"pausedUntil":"2999-01-01T00:00:00Z"}'],
    ['an untilMs that is not a number', '{"untilMs":"99999999999999"}'],
    ['null', 'null'],
  ])('reads %s as no pause', (_name, body) => {
    expect(pausedUntilOf(Buffer.from(body), NOW)).toBeUndefined();
  });
});
