import { describe, expect, it } from 'vitest';
import { MAX_ERROR_NAMES, noMetrics } from '../../shared/observability/metrics.js';
import { EmfMetrics, emfDocuments, type EmfDocument } from '../helpers/emf-metrics.js';
import { emptySummary, type Summary } from '../../shared/observability/summary.js';

const NOW = Date.parse('2026-11-22T10:00:00.000Z');

function summaryOf(fields: Partial<Summary>): Summary {
  return { ...emptySummary(), ...fields };
}

/** The metric directive of a document: namespace, dimension sets and metric names with units. */
function directive(doc: EmfDocument | undefined): { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] } {
  return (doc!._aws as { CloudWatchMetrics: never[] }).CloudWatchMetrics[0]!;
}

describe('emfDocuments', () => {
  it('writes every count, the duration and the breaker in one document with the service dimension', () => {
    // Prepare
    const summary = summaryOf({ received: 12, acked: 5, retried: 3, parked: 1, requeued: 1, deferred: 2, durationMs: 840, breakerOpened: true });
    // Act
    const [main, ...rest] = emfDocuments({ service: 'orders-retry', timestampMs: NOW, summary, errorsByName: new Map(), retryDelaysMs: [] });
    // Assess
    expect(rest).toEqual([]);
    expect(main).toMatchObject({
      _aws: { Timestamp: NOW },
      service: 'orders-retry',
      received: 12,
      acked: 5,
      retried: 3,
      parked: 1,
      requeued: 1,
      lost: 0,
      deferred: 2,
      handlerErrors: 0,
      invocationErrors: 0,
      breakerOpened: 1,
      durationMs: 840,
    });
    expect(main).not.toHaveProperty('retryDelayMs');
    const { Namespace, Dimensions, Metrics } = directive(main);
    expect(Namespace).toBe('Boomerang');
    expect(Dimensions).toEqual([['service']]);
    expect(Metrics).toContainEqual({ Name: 'parked', Unit: 'Count' });
    expect(Metrics).toContainEqual({ Name: 'durationMs', Unit: 'Milliseconds' });
    // Every metric named in the directive has its value at the root, and the other way round.
    for (const { Name } of Metrics) expect(main).toHaveProperty(Name);
  });

  it.each([
    { label: 'writes the parking lot depth when it was read', parkedDepth: 7, expected: 7 },
    { label: 'writes the depth 0 of an empty parking lot', parkedDepth: 0, expected: 0 },
    { label: 'leaves the depth out when it was not read (a failed invocation never reports 0)', parkedDepth: undefined, expected: undefined },
  ])('$label', ({ parkedDepth, expected }) => {
    // Prepare
    const summary = summaryOf({ parkedDepth });
    // Act
    const [main] = emfDocuments({ service: 's', timestampMs: NOW, summary, errorsByName: new Map(), retryDelaysMs: [] });
    // Assess
    expect(main?.parkedDepth).toBe(expected);
    expect(directive(main).Metrics.some((m) => m.Name === 'parkedDepth')).toBe(expected !== undefined);
  });

  it.each([
    { label: 'writes the time paced of a queue with a rate limit', pacedMs: 1234, expected: 1234 },
    { label: 'leaves pacedMs out without a rate limit', pacedMs: undefined, expected: undefined },
  ])('$label', ({ pacedMs, expected }) => {
    // Act
    const [main] = emfDocuments({ service: 's', timestampMs: NOW, summary: summaryOf({ pacedMs }), errorsByName: new Map(), retryDelaysMs: [] });
    // Assess
    expect(main?.pacedMs).toBe(expected);
    expect(directive(main).Metrics.find((m) => m.Name === 'pacedMs')).toEqual(expected === undefined ? undefined : { Name: 'pacedMs', Unit: 'Milliseconds' });
  });

  it.each([
    { label: 'writes paused 1 when the queue was paused during the invocation', pausedUntil: '2026-05-01T12:00:00.000Z', expected: 1 },
    { label: 'writes paused 0 otherwise, so that an alarm sees data', pausedUntil: undefined, expected: 0 },
  ])('$label', ({ pausedUntil, expected }) => {
    // Prepare
    const summary = summaryOf({ pausedUntil });
    // Act
    const [main] = emfDocuments({ service: 's', timestampMs: NOW, summary, errorsByName: new Map(), retryDelaysMs: [] });
    // Assess
    expect(main?.paused).toBe(expected);
    expect(directive(main).Metrics).toContainEqual({ Name: 'paused', Unit: 'Count' });
  });

  it('counts a failed invocation in invocationErrors, also by the name of the error it threw', () => {
    // Prepare
    const summary = summaryOf({ stoppedBecause: 'config-error' });
    // Act
    const [main, ...rest] = emfDocuments({ service: 's', timestampMs: NOW, summary, errorsByName: new Map(), retryDelaysMs: [], failedWith: 'ConfigError' });
    // Assess
    expect(main).toMatchObject({ invocationErrors: 1, received: 0, handlerErrors: 0 });
    expect(rest).toEqual([expect.objectContaining({ service: 's', errorName: 'ConfigError', invocationErrors: 1 })]);
    expect(directive(rest[0]).Dimensions).toEqual([['service', 'errorName']]);
  });

  it('writes the retry delays as a list of values, at most 100 per document', () => {
    // Prepare
    const delays = Array.from({ length: 230 }, (_, i) => 1000 + i);
    // Act
    const docs = emfDocuments({ service: 's', timestampMs: NOW, summary: emptySummary(), errorsByName: new Map(), retryDelaysMs: delays });
    // Assess
    expect(docs.map((d) => (d.retryDelayMs as number[]).length)).toEqual([100, 100, 30]);
    expect(docs.flatMap((d) => d.retryDelayMs as number[])).toEqual(delays);
    expect(directive(docs[1]).Metrics).toEqual([{ Name: 'retryDelayMs', Unit: 'Milliseconds' }]);
    expect(docs[1]).not.toHaveProperty('received');
  });

  it('writes handler errors by name with the service and errorName dimensions, and their total', () => {
    // Prepare
    const errorsByName = new Map([
      ['RetryableError', 7],
      ['UnrecoverableError', 2],
    ]);
    // Act
    const [main, ...byName] = emfDocuments({ service: 's', timestampMs: NOW, summary: emptySummary(), errorsByName, retryDelaysMs: [] });
    // Assess
    expect(main?.handlerErrors).toBe(9);
    expect(byName).toEqual([
      expect.objectContaining({ service: 's', errorName: 'RetryableError', handlerErrors: 7 }),
      expect.objectContaining({ service: 's', errorName: 'UnrecoverableError', handlerErrors: 2 }),
    ]);
    expect(directive(byName[0]).Dimensions).toEqual([['service', 'errorName']]);
  });
});

describe('EmfMetrics', () => {
  it('writes one JSON line per document when flushed, with what was recorded', () => {
    // Prepare
    const lines: string[] = [];
    const metrics = new EmfMetrics({ service: 'orders-retry', write: (line) => lines.push(line), now: () => NOW });
    metrics.handlerError('RetryableError');
    metrics.handlerError('RetryableError');
    metrics.retryDelay(2000);
    // Act
    metrics.flush(summaryOf({ received: 2, retried: 2 }));
    // Assess
    const docs = lines.map((line) => JSON.parse(line) as EmfDocument);
    expect(docs).toHaveLength(2);
    expect(docs[0]).toMatchObject({ received: 2, retried: 2, handlerErrors: 2, retryDelayMs: [2000] });
    expect(docs[1]).toMatchObject({ errorName: 'RetryableError', handlerErrors: 2 });
  });

  it.each([
    ['a name with control characters', 'Bad\nName\u00e9', 'Bad_Name_'],
    ['an empty name', '   ', 'Error'],
    ['a very long name', 'E'.repeat(200), 'E'.repeat(64)],
  ])('cleans %s into a usable dimension value', (_what, name, expected) => {
    // Prepare
    const lines: string[] = [];
    const metrics = new EmfMetrics({ service: 's', write: (line) => lines.push(line) });
    // Act
    metrics.handlerError(name);
    metrics.flush(emptySummary());
    // Assess
    expect((JSON.parse(lines[1]!) as EmfDocument).errorName).toBe(expected);
  });

  it(`counts error names beyond ${MAX_ERROR_NAMES} as Other, so one invocation cannot explode the dimensions`, () => {
    // Prepare
    const lines: string[] = [];
    const metrics = new EmfMetrics({ service: 's', write: (line) => lines.push(line) });
    // Act
    for (let i = 0; i < MAX_ERROR_NAMES + 5; i++) metrics.handlerError(`Error${i}`);
    metrics.handlerError('Error0');
    metrics.flush(emptySummary());
    // Assess
    const byName = lines.slice(1).map((line) => JSON.parse(line) as EmfDocument);
    expect(byName).toHaveLength(MAX_ERROR_NAMES + 1);
    expect(byName.find((d) => d.errorName === 'Other')?.handlerErrors).toBe(5);
    expect(byName.find((d) => d.errorName === 'Error0')?.handlerErrors).toBe(2);
  });
});

describe('noMetrics', () => {
  it('accepts every call and writes nothing', () => {
    expect(() => {
      noMetrics.handlerError('E');
      noMetrics.retryDelay(1);
      noMetrics.flush(emptySummary());
    }).not.toThrow();
  });
});
