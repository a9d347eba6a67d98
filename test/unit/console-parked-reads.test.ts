import { describe, expect, it } from 'vitest';
import { attemptHistory } from '../../shared/console/parked-reads.js';

describe('attemptHistory', () => {
  it('lists first failure, retries, last failure, broker dead-letterings (oldest first) and the park', () => {
    const history = attemptHistory({
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
    }, 'x-retry-no');
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
});
