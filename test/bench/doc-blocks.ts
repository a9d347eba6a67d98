/**
 * Generated blocks in the docs: everything between `<!-- generated:<id> start -->` and
 * `<!-- generated:<id> end -->` is written by `npm run docs:figures`, never by hand.
 *
 * @example
 * replaceGeneratedBlocks('a\n<!-- generated:x start -->\nold\n<!-- generated:x end -->\n', 'doc.md', () => 'new');
 * // 'a\n<!-- generated:x start -->\nnew\n\n<!-- generated:x end -->\n'
 */
class GeneratedBlockError extends Error {
  public constructor(message: string) {
    super(message);
    this.name = 'GeneratedBlockError';
  }
}

const START = /<!-- generated:([a-z0-9.-]+) start -->/g;

/** The ids of the generated blocks in a text, in order. */
function generatedBlockIds(text: string): string[] {
  return [...text.matchAll(START)].map((m) => m[1] as string);
}

/** The text with each generated block's body replaced by `render(id)`; the markers stay. */
function replaceGeneratedBlocks(text: string, fileName: string, render: (id: string) => string): string {
  let out = '';
  let from = 0;
  for (const match of text.matchAll(START)) {
    const id = match[1] as string;
    const bodyStart = (match.index as number) + match[0].length;
    const endMarker = `<!-- generated:${id} end -->`;
    const end = text.indexOf(endMarker, bodyStart);
    const nextStart = text.slice(bodyStart).search(START);
    if (end === -1 || (nextStart !== -1 && bodyStart + nextStart < end)) {
      throw new GeneratedBlockError(`${fileName}: the block "${id}" has no "${endMarker}" before the next block or the end; add it`);
    }
    // The blank line ends a table before the end marker in every markdown renderer.
    out += `${text.slice(from, bodyStart)}\n${render(id).trim()}\n\n`;
    from = end;
  }
  return out + text.slice(from);
}

export { GeneratedBlockError, generatedBlockIds, replaceGeneratedBlocks };
