/**
 * Removes passwords from anything that may reach a log line, an error or a summary.
 * AMQP URLs carry credentials as `amqp://user:password@host`. A password may hold a raw `@`
 * (amqplib's WHATWG parser takes the LAST `@` as the end of the credentials), a `/` or a `,`, so
 * the redaction runs up to the last `@` and hides too much rather than too little.
 */

/** Any scheme: a mistyped `http://user:password@host` is a secret too. */
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Redacts the password of one URL (or of a piece of one, such as a value cut at a comma).
 * @example redactUrl('amqps://app:p@ss/w@mq.example.com/prod') // 'amqps://app:***@mq.example.com/prod'
 */
function redactUrl(url: string): string {
  const at = url.lastIndexOf('@');
  if (at === -1) return url;
  const start = SCHEME.exec(url)?.[0].length;
  // Without a scheme we cannot tell a user from a password: hide everything before the `@`.
  if (start === undefined) return `***${url.slice(at)}`;
  const colon = url.slice(start, at).indexOf(':');
  return colon === -1 ? url : `${url.slice(0, start + colon)}:***${url.slice(at)}`;
}

/**
 * An AMQP URL with credentials inside a text: the password runs up to the last `@` before
 * whitespace, a quote or the next AMQP URL, so a comma-joined list of URLs stays readable.
 */
const URL_IN_TEXT = /(amqps?:\/\/(?:(?!amqps?:\/\/)[^\s:/"])*):(?:(?!amqps?:\/\/)[^\s"])*@/gi;

/** Redacts every AMQP URL inside a free text (an error message from a client library, a JSON log line). */
function redactText(text: string): string {
  return text.replace(URL_IN_TEXT, '$1:***@');
}

export { redactText, redactUrl };
