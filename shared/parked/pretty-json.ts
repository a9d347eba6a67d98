/**
 * JSON re-indented for a human without parsing it into values: `JSON.parse` + `JSON.stringify` would
 * round `12345678901234567890` to `12345678901234567000`, turn `10.50` into `10.5` and drop duplicate
 * keys, so a preview would show values the message does not hold.
 */

const INDENT = '  ';

/**
 * The JSON text laid out like `JSON.stringify(value, null, 2)`, every number, string and literal
 * copied as written; undefined when the text is not JSON.
 * @example prettyJson('{"amount":10.50}') // '{\n  "amount": 10.50\n}'
 */
function prettyJson(text: string): string | undefined {
  try {
    // Only to know the text is JSON: the layout below copies tokens and never reads these values.
    JSON.parse(text);
  } catch {
    return undefined;
  }
  const out: string[] = [];
  let depth = 0;
  let i = 0;
  const newline = (): void => {
    out.push('\n', INDENT.repeat(depth));
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if (c === '"') {
      const end = stringEnd(text, i);
      out.push(text.slice(i, end));
      i = end;
    } else if (c === '{' || c === '[') {
      const next = nextToken(text, i + 1);
      if (text[next] === (c === '{' ? '}' : ']')) {
        out.push(c, text[next] as string);
        i = next + 1;
      } else {
        out.push(c);
        depth++;
        newline();
        i++;
      }
    } else if (c === '}' || c === ']') {
      depth--;
      newline();
      out.push(c);
      i++;
    } else if (c === ',') {
      out.push(',');
      newline();
      i++;
    } else if (c === ':') {
      out.push(': ');
      i++;
    } else {
      // A number or true/false/null: runs until the next space or structural character.
      const start = i;
      while (i < text.length && !' \t\n\r,:]}'.includes(text[i] as string)) i++;
      out.push(text.slice(start, i));
    }
  }
  return out.join('');
}

/** The index just past the string that opens at `start` (a valid one: JSON.parse accepted it). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** The index of the first character at or after `from` that is not JSON whitespace. */
function nextToken(text: string, from: number): number {
  let i = from;
  while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  return i;
}

export { prettyJson };
