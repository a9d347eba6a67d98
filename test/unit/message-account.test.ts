import { describe, expect, it } from 'vitest';
import { accountFor, describeAccount, parseRecords } from '../helpers/message-account.js';

/** The fault scenarios' accounting (test/helpers/message-account.ts): where every sent id ended. */
const SENT = ['m-0', 'm-1', 'm-2'];

type Case = {
  readonly records: string;
  readonly parked?: readonly string[];
  readonly queued?: readonly string[];
  readonly duplicates: number;
  readonly repeatedEffects: number;
  readonly repeatedEffectIds: readonly string[];
  readonly handledTwiceSameCopy: number;
};

describe('accountFor', () => {
  it.each<[string, Case]>([
    ['each id handled once', { records: 'S m-0 0 -\nS m-1 0 -\nS m-2 0 -', duplicates: 0, repeatedEffects: 0, repeatedEffectIds: [], handledTwiceSameCopy: 0 }],
    [
      'failed attempts before one success',
      { records: 'F m-0 0 -\nF m-0 1 c1\nS m-0 2 c2\nS m-1 0 -\nS m-2 0 -', duplicates: 0, repeatedEffects: 0, repeatedEffectIds: [], handledTwiceSameCopy: 0 },
    ],
    [
      'two copies of one id both handled',
      { records: 'S m-0 0 -\nS m-0 1 c1\nS m-1 0 -\nS m-2 0 -', duplicates: 1, repeatedEffects: 1, repeatedEffectIds: ['m-0'], handledTwiceSameCopy: 0 },
    ],
    [
      'the same copy handled twice (a kill before its ack)',
      { records: 'S m-0 0 -\nS m-0 0 -\nS m-1 0 -\nS m-2 0 -', duplicates: 1, repeatedEffects: 1, repeatedEffectIds: ['m-0'], handledTwiceSameCopy: 1 },
    ],
    [
      'one id handled three times',
      {
        records: 'S m-0 0 -\nS m-0 0 -\nS m-0 1 c1\nS m-1 0 -\nS m-2 0 -',
        duplicates: 2,
        repeatedEffects: 2,
        repeatedEffectIds: ['m-0'],
        handledTwiceSameCopy: 1,
      },
    ],
    [
      'handled once and also parked (a second copy)',
      { records: 'S m-0 0 -\nS m-1 0 -\nS m-2 0 -', parked: ['m-0'], duplicates: 1, repeatedEffects: 0, repeatedEffectIds: [], handledTwiceSameCopy: 0 },
    ],
    [
      'parked twice, never handled',
      { records: 'S m-1 0 -\nS m-2 0 -', parked: ['m-0', 'm-0'], duplicates: 1, repeatedEffects: 0, repeatedEffectIds: [], handledTwiceSameCopy: 0 },
    ],
    [
      'handled once and a copy still queued',
      { records: 'S m-0 0 -\nS m-1 0 -\nS m-2 0 -', queued: ['m-0'], duplicates: 1, repeatedEffects: 0, repeatedEffectIds: [], handledTwiceSameCopy: 0 },
    ],
    [
      'handled twice and parked: both kinds at once',
      {
        records: 'S m-0 0 -\nS m-0 1 c1\nS m-1 0 -',
        parked: ['m-0', 'm-2'],
        duplicates: 2,
        repeatedEffects: 1,
        repeatedEffectIds: ['m-0'],
        handledTwiceSameCopy: 0,
      },
    ],
    [
      'an id never sent handled twice: a stranger, not a repeat',
      { records: 'S m-0 0 -\nS m-1 0 -\nS m-2 0 -\nS x-9 0 -\nS x-9 0 -', duplicates: 0, repeatedEffects: 0, repeatedEffectIds: [], handledTwiceSameCopy: 1 },
    ],
  ])('%s', (_name, c) => {
    // Act
    const account = accountFor(SENT, { records: parseRecords(c.records), parkedIds: c.parked ?? [], queuedIds: c.queued ?? [] });
    // Assess
    expect({
      duplicates: account.duplicates,
      repeatedEffects: account.repeatedEffects,
      repeatedEffectIds: account.repeatedEffectIds,
      handledTwiceSameCopy: account.handledTwiceSameCopy,
    }).toEqual({
      duplicates: c.duplicates,
      repeatedEffects: c.repeatedEffects,
      repeatedEffectIds: c.repeatedEffectIds,
      handledTwiceSameCopy: c.handledTwiceSameCopy,
    });
    expect(account.repeatedEffects).toBeLessThanOrEqual(account.duplicates);
  });

  it('counts missing ids and strangers apart from the extra outcomes', () => {
    // Act
    const account = accountFor(SENT, { records: parseRecords('S m-0 0 -\nS x-9 0 -'), parkedIds: ['m-1', 'x-9'], queuedIds: [] });
    // Assess
    expect(account).toMatchObject({
      sent: 3,
      handled: 2,
      parked: 2,
      missing: ['m-2'],
      strangers: ['x-9'],
      duplicates: 0,
      repeatedEffects: 0,
      handledAndParkedIds: [],
    });
  });

  it('names the ids both handled and parked', () => {
    // Act
    const account = accountFor(SENT, { records: parseRecords('S m-0 0 -\nS m-1 0 -\nS m-1 1 c1'), parkedIds: ['m-1', 'm-2', 'm-2'], queuedIds: [] });
    // Assess
    expect(account).toMatchObject({ duplicates: 3, repeatedEffects: 1, handledAndParkedIds: ['m-1'] });
  });
});

describe('parseRecords', () => {
  it('reads handled attempts with their retry and copy, counts failures, and passes over other lines and extra fields', () => {
    // Act
    const records = parseRecords('S m-0 2 c7 4242 1764000000000\nF m-1 0 -\nK 4242 1764000000001\n\nS m-1 1\n');
    // Assess
    expect(records).toEqual({
      handled: [
        ['m-0', 2, 'c7'],
        ['m-1', 1, '-'],
      ],
      failedAttempts: 1,
    });
  });
});

describe('describeAccount', () => {
  it('names duplicates and repeated effects apart, with the first repeated ids', () => {
    // Prepare
    const sent = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const records = parseRecords(sent.flatMap((id) => [`S ${id} 0 -`, `S ${id} 1 c1`]).join('\n'));
    // Act
    const line = describeAccount(accountFor(sent, { records, parkedIds: ['a'], queuedIds: [] }));
    // Assess
    expect(line).toContain('duplicates 8 (0 of them the same copy handled twice), repeated effects 7 (a, b, c, d, e, and 2 more), handled and parked 1 (a)');
  });
});
