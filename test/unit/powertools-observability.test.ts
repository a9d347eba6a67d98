import { afterEach, describe, expect, it, vi } from 'vitest';
import { emptySummary } from '../../shared/observability/summary.js';
import { EmfMetrics, type EmfDocument } from '../helpers/emf-metrics.js';
import { createLambdaLogger } from '../../shared/observability/powertools-logger.js';
import { PowertoolsMetrics } from '../../shared/observability/powertools-metrics.js';

/** The JSON lines Powertools writes to stdout and stderr while `act` runs. */
async function captured(act: () => void | Promise<void>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const keep = (chunk: unknown): boolean => {
    lines.push(
      ...String(chunk)
        .split('\n')
        .filter((l) => l.startsWith('{')),
    );
    return true;
  };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(keep);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(keep);
  try {
    await act();
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A document's metric names with their values, its dimensions and its namespace: what the alarms read. */
function essence(doc: EmfDocument) {
  const directive = (doc._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] })
    .CloudWatchMetrics[0]!;
  const metrics = Object.fromEntries(directive.Metrics.map(({ Name, Unit }) => [Name, [Unit, doc[Name]]]));
  const dimensions = Object.fromEntries(directive.Dimensions.flat().map((name) => [name, doc[name]]));
  return { namespace: directive.Namespace, dimensions, metrics };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('PowertoolsMetrics', () => {
  it('writes the same metrics, units, dimensions and namespace as EmfMetrics', async () => {
    // Prepare
    const summary = { ...emptySummary(), received: 4, acked: 1, retried: 2, parked: 1, durationMs: 900 };
    const record = (metrics: EmfMetrics | PowertoolsMetrics): void => {
      metrics.handlerError('PartnerDown');
      metrics.handlerError('PartnerDown');
      metrics.handlerError('UnrecoverableError');
      metrics.retryDelay(1000);
      metrics.retryDelay(4000);
    };
    const emf: EmfDocument[] = [];
    const ours = new EmfMetrics({ service: 'orders-retry', write: (line) => emf.push(JSON.parse(line) as EmfDocument) });
    const powertools = new PowertoolsMetrics({ service: 'orders-retry' });
    record(ours);
    record(powertools);
    // Act
    ours.flush(summary, 'PublishError');
    const written = await captured(() => powertools.flush(summary, 'PublishError'));
    // Assess
    expect(written.map(essence)).toEqual(emf.map(essence));
  });

  it('takes its namespace from POWERTOOLS_METRICS_NAMESPACE', async () => {
    // Prepare
    vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'Payments');
    const metrics = new PowertoolsMetrics({ service: 'orders-retry' });
    // Act
    const [main] = await captured(() => metrics.flush(emptySummary()));
    // Assess
    expect(essence(main as EmfDocument)).toMatchObject({ namespace: 'Payments', dimensions: { service: 'orders-retry' } });
  });
});

describe('createLambdaLogger', () => {
  it('writes Powertools JSON with the Lambda context keys, our fields, and no password', async () => {
    // Prepare
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
    const log = createLambdaLogger({ service: 'orders-retry' });
    log.addContext({ awsRequestId: 'req-1', functionName: 'orders-retry-fn', memoryLimitInMB: '256' } as never);
    // Act
    const lines = await captured(() => {
      log.child({ requestId: 'req-1' }).warn('message parked', { messageId: 'm-1', reason: 'amqp://boomerang:s3cret@broker:5672 refused' });
      log.debug('not written at INFO', {});
    });
    // Assess
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'WARN',
        message: 'message parked',
        service: 'orders-retry',
        function_request_id: 'req-1',
        function_name: 'orders-retry-fn',
        requestId: 'req-1',
        messageId: 'm-1',
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('s3cret');
    expect(log.debugEnabled).toBe(false);
  });

  it.each([
    [{ POWERTOOLS_LOG_LEVEL: 'DEBUG' }, true],
    [{ LOG_LEVEL: 'debug' }, true],
    [{ AWS_LAMBDA_LOG_LEVEL: 'WARN', LOG_LEVEL: 'debug' }, false],
    [{ POWERTOOLS_LOG_LEVEL: 'WARN' }, false],
  ])('takes its level from the environment: %j gives debugEnabled %s', (env, debug) => {
    // Prepare
    for (const [key, value] of Object.entries(env)) vi.stubEnv(key, value);
    // Act
    const log = createLambdaLogger({ service: 'orders-retry' });
    // Assess
    expect(log.debugEnabled).toBe(debug);
  });

  it('names the service from POWERTOOLS_SERVICE_NAME when it is set', async () => {
    // Prepare
    vi.stubEnv('POWERTOOLS_SERVICE_NAME', 'orders-from-stack');
    const log = createLambdaLogger({ service: 'orders-retry' });
    // Act
    const [line] = await captured(() => log.error('invocation summary: ended early'));
    // Assess
    expect(line).toMatchObject({ service: 'orders-from-stack', level: 'ERROR' });
  });
});
