import { describe, expect, it } from 'vitest';
import { type BrokerNames, leftovers, namesOf } from '../helpers/leftovers.js';

const names = (queues: string[], exchanges: string[] = []): BrokerNames => ({ queues: new Set(queues), exchanges: new Set(exchanges) });
const MADE = ['test-work-1a2b3c4d', 'test-local-5e6f7a8b'];

describe('leftovers', () => {
  it.each<[string, BrokerNames, BrokerNames, string[]]>([
    ['nothing new', names(['a']), names(['a']), []],
    [
      'a work queue and its delay queue',
      names([]),
      names(['test-work-1a2b3c4d', 'test-work-1a2b3c4d.delay.200ms']),
      ['queue test-work-1a2b3c4d', 'queue test-work-1a2b3c4d.delay.200ms'],
    ],
    [
      "the demo's marker exchange",
      names([]),
      names([], ['boomerang.demo.test-local-5e6f7a8b.delay-path.0123456789abcdef']),
      ['exchange boomerang.demo.test-local-5e6f7a8b.delay-path.0123456789abcdef'],
    ],
    ['a name that was there before the run', names(['test-work-1a2b3c4d.parked']), names(['test-work-1a2b3c4d.parked']), []],
    ["another run's object, made during this one", names([]), names(['test-work-99999999.parked'], ['test-work-99999999.delay-path.0']), []],
    ['a name that only starts like one of ours', names([]), names(['test-work-1a2b3c4dX']), []],
    ['a queue of someone else', names([]), names(['orders', 'boomerang.webhooks']), []],
  ])('%s', (_case, before, after, expected) => {
    // Act & Assess
    expect(leftovers(before, after, MADE)).toEqual(expected);
  });
});

describe('namesOf', () => {
  it('reads one name a line, without blank lines', () => {
    // Act & Assess
    expect([...namesOf('amq.direct\ntest-work-1a2b3c4d\n\n')]).toEqual(['amq.direct', 'test-work-1a2b3c4d']);
  });
});
