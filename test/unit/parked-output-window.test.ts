import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type OutputPage, OutputWindow, PageJoiner } from '../../shared/parked/output-window.js';

/** The pages of `lines` written one at a time, `bytes` a page, as the operator function answers them. */
function pagesOf(lines: readonly string[], bytes: number): OutputPage[] {
  const pages: OutputPage[] = [];
  for (let offset = 0; ; offset += bytes) {
    const window = new OutputWindow(offset, bytes);
    for (const line of lines) window.write(line);
    const page = window.page();
    pages.push(page);
    if (offset + bytes >= page.totalBytes) return pages;
  }
}

/** Lines that cross page boundaries inside multi-byte characters. */
const LINES = ['m-1 PartnerDown é€😀\n', 'x'.repeat(70), '\n', '😀'.repeat(40), '\n', ''];
const WHOLE = Buffer.from(LINES.join(''), 'utf8');

describe('OutputWindow', () => {
  it.each([1, 3, 7, 64, WHOLE.length, WHOLE.length + 10])(
    "keeps exactly its window of the output, with the whole output's length and SHA-256 (%i bytes a page)",
    (bytes) => {
      // Act
      const pages = pagesOf(LINES, bytes);
      // Assess
      expect(Buffer.concat(pages.map((p) => Buffer.from(p.base64, 'base64'))).equals(WHOLE)).toBe(true);
      for (const page of pages) {
        expect(page.totalBytes).toBe(WHOLE.length);
        expect(page.sha256).toBe(createHash('sha256').update(WHOLE).digest('hex'));
        expect(Buffer.from(page.base64, 'base64').length).toBeLessThanOrEqual(bytes);
      }
    },
  );

  it('answers an empty output as one empty page', () => {
    // Act
    const page = new OutputWindow(0, 10).page();
    // Assess
    expect(page).toEqual({ offset: 0, base64: '', totalBytes: 0, sha256: createHash('sha256').digest('hex') });
  });

  it.each([
    [-1, 10],
    [0, 0],
    [1.5, 10],
  ])('refuses offset %d and bytes %d, naming the option', (offset, bytes) => {
    expect(() => new OutputWindow(offset, bytes)).toThrow(/Expected `(offset|bytes)`/);
  });
});

describe('PageJoiner', () => {
  it('joins pages back into the output, asking for each next offset', () => {
    // Prepare
    const joiner = new PageJoiner();
    const pages = pagesOf(LINES, 16);
    // Act
    const asked = pages.map((page) => joiner.add(page));
    // Assess
    expect(asked).toEqual([...pages.slice(1).map((p) => p.offset), undefined]);
    expect(joiner.output().equals(WHOLE)).toBe(true);
  });

  it('refuses a page of another output (the lot changed between two reads), never joining them', () => {
    // Prepare
    const joiner = new PageJoiner();
    const [first] = pagesOf(LINES, 16);
    const [, secondOfOther] = pagesOf([...LINES, 'm-2 parked meanwhile\n'], 16);
    // Act
    joiner.add(first!);
    // Assess
    expect(() => joiner.add(secondOfOther!)).toThrow(/the output changed between two pages/);
  });

  it('refuses a page whose bytes do not match the hash every page carried', () => {
    // Prepare
    const joiner = new PageJoiner();
    const [page] = pagesOf(LINES, WHOLE.length);
    const flipped = Buffer.from(page!.base64, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    // Act
    joiner.add({ ...page!, base64: flipped.toString('base64') });
    // Assess
    expect(() => joiner.output()).toThrow(/do not match the output's length and SHA-256/);
  });

  it('refuses a page at the wrong offset, and an empty page before the end', () => {
    // Prepare
    const pages = pagesOf(LINES, 16);
    // Assess
    expect(() => new PageJoiner().add(pages[1]!)).toThrow(/expected the page at byte 0/);
    expect(() => new PageJoiner().add({ ...pages[0]!, base64: '' })).toThrow(/an empty page at byte 0/);
  });
});
