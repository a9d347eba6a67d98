import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EDITED_HEADER, editedCopy, parseMessageEdit } from '../../shared/console/edit-replay.js';
import { fakeDelivery } from '../helpers/fakes.js';
import { NATIVE_ANNOTATIONS, nativeParkHeaders } from '../helpers/native-park.js';

describe('parseMessageEdit', () => {
  it('accepts a text body and a flat header table', () => {
    expect(parseMessageEdit({ body: '{}', headers: { tenant: 'acme', priority: 2, vip: true } })).toEqual({ body: '{}', headers: { tenant: 'acme', priority: 2, vip: true } });
  });

  it.each([
    [{ headers: {} }, '`body`'],
    [{ body: 5, headers: {} }, '`body`'],
    [{ body: '', headers: [] }, '`headers`'],
    [{ body: '', headers: { nested: { a: 1 } } }, 'header "nested" must be text'],
    [{ body: '', headers: { '': 'x' } }, 'header name ""'],
    [{ body: 'x'.repeat(1024 * 1024 + 1), headers: {} }, 'at most 1048576'],
    [null, '`body`'],
  ])('refuses %j, naming the bad part', (input, message) => {
    expect(() => parseMessageEdit(input)).toThrow(expect.objectContaining({ name: 'ConsoleInputError', message: expect.stringContaining(message) }));
  });
});

describe('editedCopy', () => {
  it('carries the new body and headers as a replay, plus the audit header with the time and the original body hash', () => {
    // Prepare
    const original = fakeDelivery({ body: '{"amount":null}', headers: { tenant: 'acme', 'x-retry-no': 5, 'boomerang-error-name': 'Invalid', 'x-death': [] } });
    // Act
    const copy = editedCopy(original, { body: '{"amount":12}', headers: { tenant: 'globex', 'x-retry-no': 5, 'boomerang-error-name': 'Invalid' } }, { retryHeader: 'x-retry-no', nowMs: Date.parse('2026-11-24T00:00:00Z') });
    // Assess
    const hash = createHash('sha256').update('{"amount":null}').digest('hex');
    expect(copy.content.toString()).toBe('{"amount":12}');
    expect(copy.options.headers).toEqual({ tenant: 'globex', [EDITED_HEADER]: `edited-at=2026-11-24T00:00:00.000Z; original-body-sha256=${hash}` });
    expect(copy.options).toMatchObject({ messageId: 'm-1', persistent: true });
  });

  it('drops a native park\'s annotations the edit form sent back (x-opt-boomerang-*, x-opt-delivery-time), as a replay does', () => {
    // Prepare: the form starts from the parked message's headers, annotations included
    const original = fakeDelivery({ headers: nativeParkHeaders() });
    // Act
    const copy = editedCopy(original, { body: '{}', headers: { tenant: 'globex', ...NATIVE_ANNOTATIONS } }, { retryHeader: 'x-retry-no', nowMs: 0 });
    // Assess
    expect(Object.keys(copy.options.headers ?? {}).sort()).toEqual([EDITED_HEADER, 'tenant']);
  });
});
