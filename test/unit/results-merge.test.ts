import { describe, expect, it } from 'vitest';
import type { Row } from '../bench/report.js';
import { type BenchFile, benchSectionOf, mergeBenchReports } from '../bench/results-merge.js';

const ORDER = ['success', 'retry', 'delay', 'native'] as const;

function row(section: string, benchSection?: string): Row {
  return {
    section,
    metric: 'm',
    boomerang: 'b',
    anchor: 'a',
    ratio: '-',
    target: '-',
    verdict: 'info',
    ...(benchSection === undefined ? {} : { benchSection }),
  };
}

function report(startedAt: string, sections: readonly string[], rows: readonly Row[], rabbitmq = 'RabbitMQ 4.3.6'): BenchFile {
  return {
    startedAt,
    machine: { rabbitmq, cpu: 'AMD EPYC' },
    options: { sections },
    durationsMs: Object.fromEntries(sections.map((s) => [s, 1000])),
    rows,
    results: Object.fromEntries(sections.map((s) => [s, { at: startedAt }])),
  };
}

describe('benchSectionOf', () => {
  it.each([
    ['success path', undefined, 'success'],
    ['idempotency, retry path', undefined, 'idempotency'],
    ['delay accuracy', undefined, 'delay'],
    ['native', 'native', 'native'],
    ['retry path', 'native', 'native'],
    ['something else', undefined, undefined],
  ])('reads %s (tagged %s) as %s', (label, tag, expected) => {
    expect(benchSectionOf(row(label, tag))).toBe(expected);
  });
});

describe('mergeBenchReports', () => {
  const previous = report(
    '2026-11-24T10:00:00.000Z',
    ['success', 'retry', 'delay'],
    [row('success path'), row('retry path'), row('retry path'), row('delay accuracy')],
  );

  it('replaces the sections run and keeps the others, in section order, each with its own run', () => {
    // Prepare
    const current = report('2026-11-25T13:00:00.000Z', ['native'], [row('native', 'native')]);
    // Act
    const merged = mergeBenchReports(previous, current, ORDER);
    // Assess
    expect(merged.options.sections).toEqual(['success', 'retry', 'delay', 'native']);
    expect(merged.rows.map((r) => r.section)).toEqual(['success path', 'retry path', 'retry path', 'delay accuracy', 'native']);
    expect(merged.results).toEqual({
      success: { at: previous.startedAt },
      retry: { at: previous.startedAt },
      delay: { at: previous.startedAt },
      native: { at: current.startedAt },
    });
    expect(merged.sectionRuns?.retry).toEqual({ startedAt: previous.startedAt, rabbitmq: 'RabbitMQ 4.3.6' });
    expect(merged.sectionRuns?.native).toEqual({ startedAt: current.startedAt, rabbitmq: 'RabbitMQ 4.3.6', machine: current.machine });
    expect(merged.startedAt).toBe(current.startedAt);
  });

  it('drops the earlier rows of a section run again', () => {
    // Prepare
    const current = report('2026-11-25T13:00:00.000Z', ['retry'], [row('retry path', 'retry')]);
    // Act
    const merged = mergeBenchReports(previous, current, ORDER);
    // Assess
    expect(merged.rows.filter((r) => r.section === 'retry path')).toEqual([row('retry path', 'retry')]);
    expect(merged.sectionRuns?.retry?.startedAt).toBe(current.startedAt);
    expect(merged.sectionRuns?.success?.startedAt).toBe(previous.startedAt);
  });

  it('keeps nothing of another broker version, or when there is no earlier file', () => {
    // Prepare
    const current = report('2026-11-25T13:00:00.000Z', ['native'], [row('native', 'native')]);
    // Act
    const other = mergeBenchReports(report(previous.startedAt, previous.options.sections, previous.rows, 'RabbitMQ 3.10.8'), current, ORDER);
    const none = mergeBenchReports(undefined, current, ORDER);
    // Assess
    for (const merged of [other, none]) {
      expect(merged.options.sections).toEqual(['native']);
      expect(merged.rows).toEqual(current.rows);
    }
  });
});
