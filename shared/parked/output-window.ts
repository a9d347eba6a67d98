import { createHash, type Hash } from 'node:crypto';

/** One page of a command's output: its bytes from `offset`, the whole output's length and SHA-256. */
type OutputPage = {
  /** Where this page starts in the whole output, in bytes. */
  readonly offset: number;
  /** This page's bytes, base64 (a Lambda response is JSON: text only). */
  readonly base64: string;
  /** The whole output's length in bytes. */
  readonly totalBytes: number;
  /** The whole output's SHA-256, hex: the reader checks the pages it joined against it. */
  readonly sha256: string;
};

/**
 * Collects one window of a command's output (`bytes` from `offset`) while it hashes and counts all of
 * it, so a page of any output fits a response of bounded size and memory holds one page: the reader
 * asks for the next page at `offset + bytes` until it has `totalBytes`, then checks the hash.
 * @example
 * const window = new OutputWindow(0, 64 * 1024);
 * window.write('m-1 PartnerDown\n');
 * window.page(); // { offset: 0, base64: 'bS0x...', totalBytes: 16, sha256: '...' }
 */
class OutputWindow {
  private readonly hash: Hash = createHash('sha256');
  private readonly kept: Buffer[] = [];
  private written = 0;

  public constructor(
    private readonly offset: number,
    private readonly bytes: number,
  ) {
    if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`Expected \`offset\` to be a non-negative integer, got ${offset}`);
    if (!Number.isSafeInteger(bytes) || bytes < 1) throw new RangeError(`Expected \`bytes\` to be a positive integer, got ${bytes}`);
  }

  public write(text: string | Buffer): void {
    const chunk = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    this.hash.update(chunk);
    const start = this.written;
    this.written += chunk.length;
    const from = Math.max(this.offset, start);
    const to = Math.min(this.offset + this.bytes, this.written);
    if (from < to) this.kept.push(chunk.subarray(from - start, to - start));
  }

  /** The page, once the output is complete. */
  public page(): OutputPage {
    return { offset: this.offset, base64: Buffer.concat(this.kept).toString('base64'), totalBytes: this.written, sha256: this.hash.digest('hex') };
  }
}

/**
 * Joins pages read one after another, refusing any whose output differs from the first's (the lot
 * changed between two reads), and checks the whole against its hash: output is complete or refused,
 * never cut. Throws `Error` with the reason; the caller names the function.
 */
class PageJoiner {
  private readonly parts: Buffer[] = [];
  private first: OutputPage | undefined;
  private received = 0;

  /** Adds the next page; returns the offset of the page still missing, or undefined when complete. */
  public add(page: OutputPage): number | undefined {
    this.first ??= page;
    const first = this.first;
    if (page.totalBytes !== first.totalBytes || page.sha256 !== first.sha256) {
      throw new Error(
        `the output changed between two pages (${first.totalBytes} bytes, then ${page.totalBytes}): the parking lot changed while it was read; run the command again, or narrow it with filters or --limit`,
      );
    }
    if (page.offset !== this.received) throw new Error(`expected the page at byte ${this.received}, got one at ${page.offset}`);
    const bytes = Buffer.from(page.base64, 'base64');
    if (bytes.length === 0 && this.received < first.totalBytes) throw new Error(`an empty page at byte ${this.received} of ${first.totalBytes}`);
    this.parts.push(bytes);
    this.received += bytes.length;
    return this.received < first.totalBytes ? this.received : undefined;
  }

  /** The whole output, checked against the SHA-256 every page carried. */
  public output(): Buffer {
    const whole = Buffer.concat(this.parts);
    const sha256 = createHash('sha256').update(whole).digest('hex');
    if (this.first === undefined || whole.length !== this.first.totalBytes || sha256 !== this.first.sha256) {
      throw new Error(`the pages joined do not match the output's length and SHA-256 (${whole.length} of ${this.first?.totalBytes ?? 0} bytes)`);
    }
    return whole;
  }
}

/**
 * Fetches every page of one output, from offset 0 until it is whole, and joins and checks them
 * (`PageJoiner`). `fetch` gets the offset to ask for and the first answer (undefined for the first
 * page), whose read counts later pages pin, so that every page is of one output.
 * @example const { output, last } = await fetchPages((offset, first) => invoke({ op: 'list', page: { offset, bytes }, readCounts: first?.readCounts }));
 */
async function fetchPages<A extends { readonly page: OutputPage }>(
  fetch: (offset: number, first: A | undefined) => Promise<A>,
): Promise<{ readonly output: Buffer; readonly first: A; readonly last: A }> {
  const joiner = new PageJoiner();
  let first: A | undefined;
  for (let offset: number | undefined = 0; ; ) {
    const answer: A = await fetch(offset, first);
    first ??= answer;
    offset = joiner.add(answer.page);
    if (offset === undefined) return { output: joiner.output(), first, last: answer };
  }
}

export { fetchPages, OutputWindow, PageJoiner };
export type { OutputPage };
