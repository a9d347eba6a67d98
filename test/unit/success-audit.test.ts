import { describe, expect, it } from 'vitest';
import { auditSuccesses, type SuccessAudit } from '../helpers/success-audit.js';

/** The kill scenarios' check that no handled message was retried (test/helpers/success-audit.ts). */
const NONE: SuccessAudit = {
  retriedAfterSuccess: [],
  parkedAfterSuccess: [],
  repeatsAfterKill: 0,
  unexplainedRepeats: [],
  crashLoopParksAfterKill: 0,
  maxSuccessToKillMs: 0,
  mostCrashesSeen: 0,
  retries: 0,
};

describe('auditSuccesses', () => {
  it.each<[string, string, Record<string, string>, Partial<SuccessAudit>]>([
    ['retries, then one success', 'F m 0 - 7 100\nF m 1 - 7 130\nS m 2 - 7 200', {}, { retries: 2 }],
    ['failed, parked for spent retries, never handled', 'F m 0 - 7 100\nF m 1 - 7 130', { m: 'retries exhausted: 1 of 1 made' }, { retries: 1 }],
    ['handled again after its process was killed', 'S m 1 - 7 100\nK 7 104\nS m 1 - 8 300', {}, { repeatsAfterKill: 1, maxSuccessToKillMs: 4, retries: 1 }],
    ['handled again, its process never killed', 'S m 1 - 7 100\nS m 1 - 8 300', {}, { unexplainedRepeats: ['m'], retries: 1 }],
    ['handled again, the kill of its process came before the success', 'K 7 90\nS m 1 - 7 100\nS m 1 - 8 300', {}, { unexplainedRepeats: ['m'], retries: 1 }],
    ['retried after a success', 'S m 1 - 7 100\nS m 2 - 7 150', {}, { retriedAfterSuccess: ['m'], retries: 2 }],
    ['failed after a success', 'S m 1 - 7 100\nF m 1 - 7 150', {}, { retriedAfterSuccess: ['m'], retries: 1 }],
    ['parked for spent retries after a success', 'S m 0 - 7 100', { m: 'retries exhausted: 4 of 4 made' }, { parkedAfterSuccess: ['m'] }],
    [
      'parked as a crash loop after a success its kill took',
      'S m 0 - 7 100\nK 7 120',
      { m: 'crash loop: delivered 11 times' },
      { crashLoopParksAfterKill: 1, maxSuccessToKillMs: 20 },
    ],
    ['crashes seen: the delivery count less the retries', 'F m 0 - 7 100 0\nF m 1 - 8 300 3\nS m 2 - 9 500 3', {}, { mostCrashesSeen: 2, retries: 2 }],
    ['parked as a crash loop after a success, no kill', 'S m 0 - 7 100', { m: 'crash loop: delivered 11 times' }, { parkedAfterSuccess: ['m'] }],
  ])('%s', (_name, records, parked, expected) => {
    // Act
    const audit = auditSuccesses(records, new Map(Object.entries(parked)));
    // Assess
    expect(audit).toEqual({ ...NONE, ...expected });
  });
});
