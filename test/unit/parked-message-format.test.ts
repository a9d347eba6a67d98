import { describe, expect, it } from 'vitest';
import { bodyText, formatShow, previewBody, showEntry } from '../../shared/parked/message-format.js';
import { fakeDelivery } from '../helpers/fakes.js';

describe('previewBody', () => {
  it.each([
    ['JSON, pretty', Buffer.from('{"a":1,"b":[2]}'), 100, { kind: 'json', text: '{\n  "a": 1,\n  "b": [\n    2\n  ]\n}', cut: false }],
    ['text', Buffer.from('plain text, not JSON'), 100, { kind: 'text', text: 'plain text, not JSON', cut: false }],
    ['text, cut', Buffer.from('abcdefghij'), 4, { kind: 'text', text: 'abcd', cut: true }],
    ['bytes that are not UTF-8, as base64', Buffer.from([0xff, 0xfe, 0x00, 0x01]), 100, { kind: 'binary', text: '//4AAQ==', cut: false }],
    ['text with control characters, as base64', Buffer.from('a\u0001b'), 100, { kind: 'binary', text: 'YQFi', cut: false }],
    ['an empty body', Buffer.alloc(0), 100, { kind: 'text', text: '', cut: false }],
    [
      'JSON numbers as written, not as a parse rounds them',
      Buffer.from('{"orderId":12345678901234567890,"amount":10.50}'),
      100,
      { kind: 'json', text: '{\n  "orderId": 12345678901234567890,\n  "amount": 10.50\n}', cut: false },
    ],
  ])('shows %s', (_what, body, max, expected) => {
    expect(previewBody(body, max)).toMatchObject({ ...expected, bytes: body.length });
  });
});

describe('formatShow', () => {
  it('prints properties, sorted headers with multi-line values indented, and the body', () => {
    // Prepare
    const message = fakeDelivery({
      body: '{"orderId":42}',
      headers: {
        'boomerang-error-stack': 'PartnerDown: 503\n    at handler',
        'boomerang-attempts': 6,
        'x-death': [{ queue: 'orders', time: { '!': 'timestamp', value: 0 } }],
      },
    });
    // Act
    const text = formatShow(message, 4000);
    // Assess
    expect(text).toContain('Properties\n  contentType  application/json\n  messageId    m-1');
    expect(text.indexOf('boomerang-attempts')).toBeLessThan(text.indexOf('boomerang-error-stack'));
    expect(text).toContain('PartnerDown: 503\n                             at handler');
    expect(text).toContain('"time":"1970-01-01T00:00:00.000Z"');
    expect(text).toContain('Body (14 bytes, json)\n  {\n    "orderId": 42\n  }');
  });

  it('says first why a broker-dead-lettered message is parked: its last death, not x-first-death-*', () => {
    // Prepare: it expired out of a delay queue, then was rejected from its work queue
    const message = fakeDelivery({
      headers: {
        'x-first-death-queue': 'orders.delay.1000ms',
        'x-first-death-reason': 'expired',
        'x-death': [
          { queue: 'orders', reason: 'rejected', count: 1 },
          { queue: 'orders.delay.1000ms', reason: 'expired', count: 1 },
        ],
      },
    });
    // Act
    const text = formatShow(message, 4000);
    const entry = showEntry(message, 4000);
    // Assess
    expect(text).toMatch(/^Parked\n {2}error +\(rejected\)\n {2}reason +dead-lettered by the broker from orders \(rejected\)\n {2}sourceQueue +orders\n/);
    expect(entry.parked).toEqual({
      error: '(rejected)',
      errorMessage: null,
      errorFields: null,
      reason: 'dead-lettered by the broker from orders (rejected)',
      sourceQueue: 'orders',
      parkedAt: null,
      attempts: null,
      recordedIn: null,
    });
  });

  it('says where the body was cut', () => {
    expect(formatShow(fakeDelivery({ body: 'x'.repeat(50) }), 10)).toContain('… (cut at 10 characters)');
  });
});

describe('showEntry', () => {
  it("says why it is parked with the error's message, not only its name", () => {
    // Prepare
    const message = fakeDelivery({
      headers: {
        'boomerang-error-name': 'EventDecodeError',
        'boomerang-error-message': 'invalid base64 in field data',
        'boomerang-park-reason': 'unrecoverable',
      },
    });
    // Act
    const entry = showEntry(message, 100);
    // Assess
    expect(entry.parked).toMatchObject({ error: 'EventDecodeError', errorMessage: 'invalid base64 in field data', reason: 'unrecoverable' });
    expect(formatShow(message, 100)).toMatch(/\n {2}errorMessage +invalid base64 in field data\n/);
  });

  it('is plain JSON: byte arrays as text, timestamps as ISO dates', () => {
    // Prepare
    const message = fakeDelivery({ headers: { region: Buffer.from('eu'), 'x-death': [{ time: { '!': 'timestamp', value: 0 } }] } });
    // Act
    const entry = showEntry(message, 100);
    // Assess
    expect(entry).toMatchObject({
      properties: { messageId: 'm-1' },
      headers: { region: 'eu', 'x-death': [{ time: '1970-01-01T00:00:00.000Z' }] },
      body: { kind: 'json', bytes: 14 },
    });
  });
});

describe('bodyText', () => {
  it.each([
    ['UTF-8 text', Buffer.from('héllo\n\tworld\r\n'), { kind: 'text', text: 'héllo\n\tworld\r\n' }],
    ['an empty body', Buffer.alloc(0), { kind: 'text', text: '' }],
    ['bytes 0..255', Buffer.from(Array.from({ length: 256 }, (_, i) => i)), { kind: 'binary', reason: 'its bytes are not valid UTF-8' }],
    ['a gzip header', Buffer.from([0x1f, 0x8b, 0x08, 0x00]), { kind: 'binary', reason: 'its bytes are not valid UTF-8' }],
    ['text with a NUL', Buffer.from('ab\u0000c'), { kind: 'binary', reason: 'it holds the control character U+0000 (at character 2)' }],
  ])('reads %s', (_what, body, expected) => {
    expect(bodyText(body)).toEqual(expected);
  });
});
