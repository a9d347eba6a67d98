import { describe, expect, it } from 'vitest';
import { attemptHistory } from '../../shared/console/parked-reads.js';
import { nativeParkHeaders } from '../helpers/native-park.js';

describe('attemptHistory', () => {
  it('lists first failure, retries, last failure, broker dead-letterings (oldest first) and the park', () => {
    const history = attemptHistory(
      {
        'boomerang-first-failure-at': '2026-11-24T00:00:00.000Z',
        'x-retry-no': 3,
        'boomerang-last-failure-at': '2026-11-24T00:05:00.000Z',
        'x-death': [
          { queue: 'orders', reason: 'rejected', count: 1, time: { '!': 'timestamp', value: 1_795_000_200 } },
          { queue: 'orders.delay.1000ms', reason: 'expired', count: 3, time: { '!': 'timestamp', value: 1_795_000_100 } },
        ],
        'boomerang-parked-at': '2026-11-24T00:05:01.000Z',
        'boomerang-attempts': 4,
        'boomerang-park-reason': 'retries exhausted: 3 of 3 made',
      },
      'x-retry-no',
    );
    expect(history).toEqual([
      { at: '2026-11-24T00:00:00.000Z', event: 'first failure' },
      { at: null, event: 'retried 3 time(s) through the delay path' },
      { at: '2026-11-24T00:05:00.000Z', event: 'last failure' },
      { at: new Date(1_795_000_100_000).toISOString(), event: 'dead-lettered by the broker from orders.delay.1000ms (expired), 3 time(s)' },
      { at: new Date(1_795_000_200_000).toISOString(), event: 'dead-lettered by the broker from orders (rejected), 1 time(s)' },
      { at: '2026-11-24T00:05:01.000Z', event: 'parked after 4 attempt(s): retries exhausted: 3 of 3 made' },
    ]);
  });

  it('is empty for a message without history headers', () => {
    expect(attemptHistory({ tenant: 'acme' }, 'x-retry-no')).toEqual([]);
  });

  it("reads a native park from its annotations: failures, the broker's delayed retries, the park and its dead-lettering", () => {
    // Act
    const history = attemptHistory(nativeParkHeaders(), 'x-retry-no');
    // Assess
    expect(history).toEqual([
      { at: '2026-11-22T08:00:00.000Z', event: 'first failure' },
      { at: null, event: 'retried 2 time(s) by the broker (native delayed retry)' },
      { at: '2026-11-22T08:59:00.000Z', event: 'last failure' },
      { at: new Date(1_795_334_400_000).toISOString(), event: 'dead-lettered by the broker from orders (rejected), 1 time(s)' },
      { at: '2026-11-22T09:00:00.000Z', event: 'parked after 3 attempt(s): retries exhausted: 2 of 2 made' },
    ]);
  });
});
