import { describe, expect, it } from 'vitest';
import { createLogger, logLevelFrom, type Logger, type LogLevel } from '../../shared/observability/logger.js';
import { recordingLogger } from '../helpers/fakes.js';

function logAtEveryLevel(log: Logger): void {
  log.debug('d');
  log.info('i');
  log.warn('w');
  log.error('e');
}

describe('createLogger', () => {
  it.each<[LogLevel | undefined, string[]]>([
    ['debug', ['debug', 'info', 'warn', 'error']],
    [undefined, ['info', 'warn', 'error']],
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
    ['silent', []],
  ])('writes only lines at or above level %s', (level, expected) => {
    // Prepare
    const lines: string[] = [];
    const log = createLogger({ level, write: (line) => lines.push(line) });
    // Act
    logAtEveryLevel(log);
    // Assess
    expect(lines.map((line) => (JSON.parse(line) as { level: string }).level)).toEqual(expected);
  });

  it('writes one JSON object per line with level, time and message', () => {
    // Prepare
    const { log, lines } = recordingLogger();
    // Act
    log.info('two\nlines', { n: 1 });
    // Assess
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ level: 'info', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/), message: 'two\nlines', n: 1 });
  });

  it('merges child fields over the parent fields, and call fields over both', () => {
    // Prepare
    const lines: string[] = [];
    const parent = createLogger({ fields: { fn: 'pull', queue: 'orders' }, write: (line) => lines.push(line) });
    const child = parent.child({ queue: 'invoices', requestId: 'r1' });
    // Act
    child.info('from child', { requestId: 'r2', extra: true });
    parent.info('from parent');
    // Assess
    const [fromChild, fromParent] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(fromChild).toMatchObject({ fn: 'pull', queue: 'invoices', requestId: 'r2', extra: true });
    expect(fromParent).toMatchObject({ fn: 'pull', queue: 'orders' });
    expect(fromParent).not.toHaveProperty('requestId');
  });

  it('keeps the level of its parent in a child', () => {
    // Prepare
    const lines: string[] = [];
    const child = createLogger({ level: 'warn', write: (line) => lines.push(line) }).child({ a: 1 });
    // Act
    logAtEveryLevel(child);
    // Assess
    expect(lines).toHaveLength(2);
  });

  it('writes bigints as strings and errors as name and message', () => {
    // Prepare
    const { log, entries } = recordingLogger();
    const error = new TypeError('bad input');
    // Act
    log.error('failed', { deliveryTag: 12345678901234567890n, error, nested: { cause: new RangeError('too big') } });
    // Assess
    expect(entries()[0]).toMatchObject({
      deliveryTag: '12345678901234567890',
      error: { name: 'TypeError', message: 'bad input' },
      nested: { cause: { name: 'RangeError', message: 'too big' } },
    });
  });

  it.each([
    ['the message', (log: Logger) => log.warn('cannot reach amqp://app:s3cret@mq:5672')],
    ['a field', (log: Logger) => log.info('connecting', { url: 'amqps://app:s3cret@mq:5671' })],
    ['a list field', (log: Logger) => log.info('connecting', { urls: ['amqp://a:s3cret@mq-1', 'amqp://b:s3cret@mq-2'] })],
    ['an error field', (log: Logger) => log.error('lost', { error: new Error('closed amqp://app:p@s3cret@mq') })],
    ['a child field', (log: Logger) => log.child({ endpoint: 'amqp://app:s3cret@mq' }).info('hello')],
  ])('redacts an AMQP password in %s', (_where, write) => {
    // Prepare
    const { log, lines } = recordingLogger();
    // Act
    write(log);
    // Assess
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('s3cret');
    expect(lines[0]).toContain(':***@');
    expect(() => JSON.parse(lines[0]!) as unknown).not.toThrow();
  });
});

describe('createLogger with format pretty', () => {
  it('writes time, level, message and key=value fields on one line', () => {
    // Prepare
    const lines: string[] = [];
    const log = createLogger({ format: 'pretty', write: (line) => lines.push(line), fields: { queue: 'orders' } });
    // Act
    log.warn('message\nparked', { messageId: 'm-1', reason: 'retries exhausted: 5 of 5 made', attempts: 6, summary: { acked: 1 } });
    // Assess
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} /);
    expect(lines[0]).toContain('WARN');
    expect(lines[0]).toContain('message parked queue=orders messageId=m-1 reason="retries exhausted: 5 of 5 made" attempts=6 summary={"acked":1}');
  });

  it('colours the level unless NO_COLOR is set', () => {
    // Prepare
    const lines: string[] = [];
    const log = createLogger({ format: 'pretty', write: (line) => lines.push(line) });
    const saved = process.env.NO_COLOR;
    // Act
    delete process.env.NO_COLOR;
    log.error('coloured');
    process.env.NO_COLOR = '1';
    log.error('plain');
    if (saved === undefined) delete process.env.NO_COLOR;
    else process.env.NO_COLOR = saved;
    // Assess
    expect(lines[0]).toContain('\x1b[31mERROR\x1b[0m');
    expect(lines[1]).not.toContain('\x1b[');
  });

  it('redacts an AMQP password in a pretty line too', () => {
    // Prepare
    const lines: string[] = [];
    const log = createLogger({ format: 'pretty', write: (line) => lines.push(line) });
    // Act
    log.info('connecting', { url: 'amqps://app:s3cret@mq:5671' });
    // Assess
    expect(lines[0]).not.toContain('s3cret');
  });

  it('writes JSON when a write function is given and no format is asked', () => {
    // Prepare
    const { log, lines } = recordingLogger();
    // Act
    log.info('hello');
    // Assess
    expect(() => JSON.parse(lines[0]!) as unknown).not.toThrow();
  });
});

describe('logLevelFrom', () => {
  it.each<[string | undefined, LogLevel]>([
    ['debug', 'debug'],
    ['warn', 'warn'],
    ['silent', 'silent'],
    [undefined, 'info'],
    ['', 'info'],
    ['verbose', 'info'],
    ['DEBUG', 'info'],
  ])('reads %j as %s', (value, expected) => {
    expect(logLevelFrom(value)).toBe(expected);
  });

  // Regression: `value in LEVELS` once accepted inherited keys such as toString.
  it.each(['toString', 'constructor'])('reads the inherited key %s as info', (value) => {
    expect(logLevelFrom(value)).toBe('info');
  });
});
