/** Cuts a string to at most `maxBytes` of UTF-8 without splitting a character; marks the cut with `marker`. */
function cutUtf8(text: string, maxBytes: number, marker = '…[cut]'): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const budget = maxBytes - Buffer.byteLength(marker);
  let out = Buffer.from(text).subarray(0, budget).toString('utf8');
  // A split multi-byte character decodes as U+FFFD at the end: drop it.
  if (out.endsWith('\uFFFD')) out = out.slice(0, -1);
  return out + marker;
}

export { cutUtf8 };
