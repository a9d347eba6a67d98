/**
 * Whether a body is text, and why not: `show` and the console print a body as text only when the
 * text is exactly its bytes, and the console edits only such a body.
 */

/** The body's exact UTF-8 text, or why it is not text. */
type BodyText = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'binary'; readonly reason: string };

/** C0 control characters other than tab, line feed, vertical tab, form feed and carriage return: printed as text they garble a terminal. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose
const BINARY_CONTROL = /[\u0000-\u0008\u000e-\u001f]/;

/**
 * The body as UTF-8 text when decoding it gives back the same bytes and it holds no control
 * characters (tab, line feed, carriage return, vertical tab and form feed excepted).
 * @example bodyText(Buffer.from([0xff])) // { kind: 'binary', reason: 'its bytes are not valid UTF-8' }
 */
function bodyText(body: Buffer): BodyText {
  const text = body.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(body)) return { kind: 'binary', reason: 'its bytes are not valid UTF-8' };
  const control = BINARY_CONTROL.exec(text);
  if (control !== null) return { kind: 'binary', reason: `it holds the control character ${codePoint(control[0])} (at character ${control.index})` };
  return { kind: 'text', text };
}

/** `U+000D` for a carriage return. */
function codePoint(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

export { bodyText, codePoint };
