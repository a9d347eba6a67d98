import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { editedCopy } from '../../shared/console/edit-replay.js';
import { EDITED_HEADER, type MessageEdit } from '../../shared/console/message-edit.js';
import { fakeDelivery } from '../helpers/fakes.js';
import { NATIVE_ANNOTATIONS, nativeParkHeaders, TEAM_HEADERS } from '../helpers/native-park.js';

const NOW = Date.parse('2026-11-24T00:00:00Z');
const OPTIONS = { retryHeader: 'x-retry-no', nowMs: NOW };
const NO_CHANGE: MessageEdit = { set: {}, remove: [] };

/** A parked message with the team's headers of every kind: x- ones, a table with a list, and the park's own. */
function parked(body: string | Buffer = '{"orderId":12345678901234567890,"amount":10.50}', properties: Record<string, unknown> = {}) {
  return fakeDelivery({
    body: body as string,
    properties,
    headers: { tenant: 'acme', 'x-custom': 'a', 'x-count': 7, meta: { a: 1, b: ['x', 2] }, 'x-retry-no': 5, 'boomerang-error-name': 'Invalid', 'x-death': [] },
  });
}

/** The headers a replay sends of {@link parked}: the park's, the broker's and the retry count go. */
const KEPT = { tenant: 'acme', 'x-custom': 'a', 'x-count': 7, meta: { a: 1, b: ['x', 2] } };

function auditOf(body: string | Buffer): string {
  return `edited-at=2026-11-24T00:00:00.000Z; original-body-sha256=${createHash('sha256').update(body).digest('hex')}`;
}

describe('editedCopy', () => {
  it('sends the new body with every other header kept, plus the audit header with the time and the original body hash', () => {
    // Prepare
    const original = '{"orderId":12345678901234567890,"amount":10.50}';
    // Act
    const outcome = editedCopy(parked(original), { body: '{"orderId":12345678901234567890,"amount":11.50}', set: {}, remove: [] }, OPTIONS);
    // Assess
    expect(outcome.kind).toBe('edited');
    if (outcome.kind === 'refused') return;
    expect(outcome.copy.content.toString()).toBe('{"orderId":12345678901234567890,"amount":11.50}');
    expect(outcome.copy.options.headers).toEqual({ ...KEPT, [EDITED_HEADER]: auditOf(original) });
    expect(outcome.copy.options).toMatchObject({ messageId: 'm-1', persistent: true, contentType: 'application/json' });
  });

  it.each<[string, MessageEdit, Record<string, unknown>]>([
    ['sets a new header', { set: { region: 'eu' }, remove: [] }, { ...KEPT, region: 'eu' }],
    ['changes an x- header', { set: { 'x-count': 8 }, remove: [] }, { ...KEPT, 'x-count': 8 }],
    ['removes a table header', { set: {}, remove: ['meta'] }, { tenant: 'acme', 'x-custom': 'a', 'x-count': 7 }],
  ])('%s and keeps the body byte for byte', (_what, edit, headers) => {
    // Prepare
    const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    // Act
    const outcome = editedCopy(parked(body), edit, OPTIONS);
    // Assess
    expect(outcome.kind).toBe('edited');
    if (outcome.kind === 'refused') return;
    expect(outcome.copy.content.equals(body)).toBe(true);
    expect(outcome.copy.options.headers).toEqual({ ...headers, [EDITED_HEADER]: auditOf(body) });
  });

  it.each<[string, MessageEdit]>([
    ['no change at all', NO_CHANGE],
    [
      'the same body text and a header set to its own value',
      { body: '{"orderId":12345678901234567890,"amount":10.50}', set: { 'x-count': 7 }, remove: ['absent'] },
    ],
    ['only a header a replay drops anyway removed', { set: {}, remove: ['boomerang-error-name'] }],
  ])('treats %s as a plain replay: the original bytes and headers, no audit header', (_what, edit) => {
    // Prepare
    const message = parked();
    // Act
    const outcome = editedCopy(message, edit, OPTIONS);
    // Assess
    expect(outcome.kind).toBe('unchanged');
    if (outcome.kind === 'refused') return;
    expect(outcome.copy.content.equals(message.content)).toBe(true);
    expect(outcome.copy.options.headers).toEqual(KEPT);
  });

  it.each([
    ['bytes that are not UTF-8', parked(Buffer.from([0xff, 0x00])), 'not valid UTF-8'],
    ['a gzip body', parked(Buffer.from('text'), { contentEncoding: 'gzip' }), 'content encoding is "gzip"'],
  ])('refuses to replace %s: the page could not have shown it as text', (_what, message, reason) => {
    expect(editedCopy(message, { body: 'x', set: {}, remove: [] }, OPTIONS)).toEqual({ kind: 'refused', reason: expect.stringContaining(reason) });
  });

  it("drops a native park's annotations, as a replay does", () => {
    // Prepare
    const original = fakeDelivery({ headers: nativeParkHeaders() });
    // Act
    const outcome = editedCopy(original, { body: '{}', set: {}, remove: [] }, OPTIONS);
    // Assess
    if (outcome.kind === 'refused') throw new Error(outcome.reason);
    expect(Object.keys(outcome.copy.options.headers ?? {}).sort()).toEqual([EDITED_HEADER, ...Object.keys(TEAM_HEADERS)].sort());
    expect(Object.keys(outcome.copy.options.headers ?? {})).not.toContain(Object.keys(NATIVE_ANNOTATIONS)[0]);
  });
});
