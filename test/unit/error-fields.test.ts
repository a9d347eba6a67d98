import { describe, expect, it } from 'vitest';
import { errorFacts } from '../../shared/retry/decide-retry.js';
import { ERROR_FIELDS_MAX_BYTES, errorFields } from '../../shared/retry/error-fields.js';

class PartnerError extends Error {
  public readonly status = 503;
  public readonly response = { body: 'upstream timeout', headers: { 'retry-after': '30' } };

  public constructor() {
    super('partner answered 503');
    this.name = 'PartnerError';
  }
}

describe('what is recorded of whatever a handler throws', () => {
  it.each([
    { thrown: new Error('boom'), name: 'Error', message: 'boom', fields: undefined },
    {
      thrown: new PartnerError(),
      name: 'PartnerError',
      message: 'partner answered 503',
      fields: '{"status":503,"response":{"body":"upstream timeout","headers":{"retry-after":"30"}}}',
    },
    {
      thrown: new Error('write failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) }),
      name: 'Error',
      message: 'write failed',
      fields: '{"cause":{"name":"Error","message":"socket hang up","code":"ECONNRESET"}}',
    },
    {
      thrown: { status: 503, detail: 'try later' },
      name: 'Error',
      message: '{"status":503,"detail":"try later"}',
      fields: '{"status":503,"detail":"try later"}',
    },
    { thrown: { name: 'HttpError', message: 'HTTP 429', status: 429 }, name: 'HttpError', message: 'HTTP 429', fields: '{"status":429}' },
    { thrown: 'partner down', name: 'string', message: 'partner down', fields: undefined },
    { thrown: 42, name: 'number', message: '42', fields: undefined },
    { thrown: null, name: 'null', message: 'null', fields: undefined },
    { thrown: undefined, name: 'undefined', message: 'undefined', fields: undefined },
    { thrown: { size: 10n }, name: 'Error', message: '{"size":"10"}', fields: '{"size":"10"}' },
    {
      thrown: { url: 'amqp://app:s3cret@mq.example.com', status: 500 },
      name: 'Error',
      message: '{"url":"amqp://app:***@mq.example.com","status":500}',
      fields: '{"url":"amqp://app:***@mq.example.com","status":500}',
    },
  ])('$name: $message', ({ thrown, name, message, fields }) => {
    // Act
    const facts = errorFacts(thrown);
    // Assess
    expect({ name: facts.name, message: facts.message, fields: errorFields(thrown) }).toEqual({ name, message, fields });
  });

  it('describes a value JSON cannot write instead of throwing', () => {
    // Prepare
    const cyclic: Record<string, unknown> = { status: 500 };
    cyclic.self = cyclic;
    // Act
    const fields = errorFields(cyclic);
    // Assess
    expect(JSON.parse(fields as string)).toMatchObject({ keys: ['status', 'self'] });
    expect(errorFacts(cyclic).message).toBe('');
  });

  it('keeps at most ERROR_FIELDS_MAX_BYTES, cut on a character', () => {
    // Act
    const fields = errorFields({ detail: 'é'.repeat(5000) }) as string;
    // Assess
    expect(Buffer.byteLength(fields)).toBeLessThanOrEqual(ERROR_FIELDS_MAX_BYTES);
    expect(fields.endsWith('é…')).toBe(true);
  });
});
