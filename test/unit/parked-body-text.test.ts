import { describe, expect, it } from 'vitest';
import { bodyText } from '../../shared/parked/body-text.js';

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
