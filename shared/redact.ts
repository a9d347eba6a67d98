/**
 * Removes passwords from anything that may reach a log line, an error or a summary.
 * AMQP URLs carry credentials as `amqp://user:password@host`.
 */
function redactUrl(url: string): string {
  return url.replace(/^(amqps?:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}

/** Redacts every AMQP URL inside a free text (an error message from a client library, say). */
function redactText(text: string): string {
  return text.replace(/(amqps?:\/\/[^:/@\s]*):[^@/\s]*@/gi, '$1:***@');
}

export { redactText, redactUrl };
