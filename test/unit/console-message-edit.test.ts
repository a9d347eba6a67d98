import { describe, expect, it } from 'vitest';
import { bodyEditability, editStart, MAX_EDITED_BODY_BYTES, parseMessageEdit } from '../../shared/console/message-edit.js';
import { fakeDelivery } from '../helpers/fakes.js';

describe('parseMessageEdit', () => {
  it.each([
    [
      'changes only',
      { body: '{}', headers: { set: { tenant: 'acme', priority: 2, vip: true }, remove: ['x-trace'] } },
      { body: '{}', set: { tenant: 'acme', priority: 2, vip: true }, remove: ['x-trace'] },
    ],
    ['no body: the parked one is kept', { headers: { set: { 'x-custom': 'b' } } }, { set: { 'x-custom': 'b' }, remove: [] }],
    ['nothing at all', {}, { set: {}, remove: [] }],
  ])('accepts %s', (_what, input, expected) => {
    expect(parseMessageEdit(input, 'x-retry-no')).toEqual(expected);
  });

  it.each([
    [null, 'must be an object'],
    [{ body: 5 }, '`body`'],
    [{ body: 'x'.repeat(MAX_EDITED_BODY_BYTES + 1) }, 'at most 1048576'],
    [{ headers: { tenant: 'acme' } }, 'unknown: tenant'],
    [{ headers: [] }, '`headers`'],
    [{ headers: { set: { nested: { a: 1 } } } }, 'header "nested" must be text'],
    [{ headers: { set: { big: 2 ** 64 } } }, 'send larger ones as text'],
    [{ headers: { set: { '': 'x' } } }, 'header name ""'],
    [{ headers: { remove: 'tenant' } }, '`headers.remove`'],
    [{ headers: { set: { tenant: 'a' }, remove: ['tenant'] } }, 'both set and removed'],
    [
      { headers: { set: { 'x-retry-no': 0, 'x-death': 'x', 'boomerang-edited': 'x', 'boomerang-error-name': 'x' } } },
      '"x-retry-no", "x-death", "boomerang-edited", "boomerang-error-name" cannot be set',
    ],
    [{ extra: 1 }, 'unknown: extra'],
  ])('refuses %j, naming the bad part', (input, message) => {
    expect(() => parseMessageEdit(input, 'x-retry-no')).toThrow(
      expect.objectContaining({ name: 'ConsoleInputError', message: expect.stringContaining(message) }),
    );
  });
});

describe('bodyEditability', () => {
  it.each([
    [
      'JSON with big numbers, as written',
      Buffer.from('{"orderId":12345678901234567890,"amount":10.50}'),
      {},
      { editable: true, text: '{"orderId":12345678901234567890,"amount":10.50}' },
    ],
    ['text with tabs and line feeds', Buffer.from('a\tb\nc'), { contentEncoding: 'UTF-8' }, { editable: true, text: 'a\tb\nc' }],
    ['exactly 1 MiB', Buffer.alloc(MAX_EDITED_BODY_BYTES, 'a'), {}, { editable: true, text: 'a'.repeat(MAX_EDITED_BODY_BYTES) }],
    ['bytes 0..255', Buffer.from(Array.from({ length: 256 }, (_, i) => i)), {}, { editable: false, reason: 'its bytes are not valid UTF-8' }],
    [
      'a gzip body',
      Buffer.from('text'),
      { contentEncoding: 'gzip' },
      { editable: false, reason: 'its content encoding is "gzip": the bytes are encoded, not plain text' },
    ],
    ['text with a NUL', Buffer.from('a\u0000'), {}, { editable: false, reason: 'it holds the control character U+0000 (at character 1)' }],
    [
      'text with CR LF line ends',
      Buffer.from('a\r\nb'),
      {},
      { editable: false, reason: 'it holds the control character U+000D (at character 1), which a text box does not keep as it is' },
    ],
    [
      'one byte over 1 MiB',
      Buffer.alloc(MAX_EDITED_BODY_BYTES + 1, 'a'),
      {},
      { editable: false, reason: 'it is 1048577 bytes; the page edits bodies of at most 1048576 bytes (1 MiB)' },
    ],
  ])('%s', (_what, body, properties, expected) => {
    expect(bodyEditability(fakeDelivery({ body: body as unknown as string, properties }))).toEqual(expected);
  });
});

describe('editStart', () => {
  it('offers the headers a replay sends as JSON values, and names the others, which it keeps as they are', () => {
    // Prepare
    const message = fakeDelivery({
      headers: {
        tenant: 'acme',
        'x-count': 7,
        vip: true,
        ratio: 0.5,
        meta: { a: 1 },
        list: ['x'],
        bytes: Buffer.from('b'),
        huge: 2 ** 60,
        'x-retry-no': 5,
        'boomerang-error-name': 'E',
        'x-death': [],
      },
    });
    // Act
    const start = editStart(message, 'x-retry-no');
    // Assess
    expect(start.headers).toEqual({ tenant: 'acme', 'x-count': 7, vip: true, ratio: 0.5 });
    expect(start.otherHeaders).toEqual(['meta', 'list', 'bytes', 'huge']);
    expect(start.body).toEqual({ editable: true, text: '{"orderId":42}' });
  });
});
