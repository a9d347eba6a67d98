import { describe, expect, it } from 'vitest';
import { formatReport, formatVerifyAdvice } from '../../shared/topology/report.js';
import { deadLetterPolicy } from '../../shared/topology/policy-fix.js';

describe('formatReport', () => {
  it('prints one aligned line per item with the difference or the detail', () => {
    // Prepare
    const report = {
      ok: false,
      items: [
        { kind: 'queue', name: 'orders', status: 'ok', detail: 'exists' },
        { kind: 'queue', name: 'orders.delay.1000ms', status: 'different', argument: 'x-message-ttl', expected: '1000', actual: '2000' },
        { kind: 'exchange', name: 'd', status: 'missing' },
      ],
    } as const;
    // Act
    const text = formatReport(report);
    // Assess
    expect(text.split('\n')).toEqual([
      'ok         queue     orders               exists',
      'different  queue     orders.delay.1000ms  x-message-ttl: expected 1000, found 2000',
      'missing    exchange  d',
    ]);
  });

  it('prints nothing for an empty report', () => {
    expect(formatReport({ items: [] })).toBe('');
  });
});

describe('formatReport with every difference', () => {
  it('prints all differing arguments of an item on its line', () => {
    // Prepare
    const differences = [
      { kind: 'queue', name: 'q', argument: 'x-message-ttl', expected: '1000', actual: '5' },
      { kind: 'queue', name: 'q', argument: 'x-max-length', expected: undefined, actual: '9' },
    ] as const;
    // Act
    const text = formatReport({ items: [{ kind: 'queue', name: 'q', status: 'different', differences }] });
    // Assess
    expect(text).toBe('different  queue  q  x-message-ttl: expected 1000, found 5; x-max-length: expected (not set), found 9');
  });
});

describe('formatVerifyAdvice', () => {
  it('prints each warning with its command, what to do about each difference, and what apply creates', () => {
    // Prepare
    const difference = { kind: 'queue', name: 'q', argument: 'x-message-ttl', expected: '1000', actual: '5' } as const;
    const report = {
      items: [
        { kind: 'queue', name: 'q', status: 'different', differences: [difference], messageCount: 0 },
        { kind: 'queue', name: 'r', status: 'missing' },
      ],
      warnings: [{ queue: 'orders', message: 'work queue drops', fix: deadLetterPolicy('orders', 'orders.parked') }],
    } as const;
    // Act
    const lines = formatVerifyAdvice(report, 'prod');
    // Assess
    expect(lines).toEqual([
      `WARNING: work queue drops\n  rabbitmqctl set_policy -p prod boomerang-dead-letter-orders '^orders$' '{"dead-letter-exchange":"","dead-letter-routing-key":"orders.parked"}' --apply-to queues`,
      expect.stringMatching(/^queue 'q' has x-message-ttl = '5' but the topology expects '1000'\. .* It is empty: delete it/),
      '1 missing: `boomerang topology apply` creates it.',
    ]);
  });
});
