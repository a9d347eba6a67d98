import { UnrecoverableError } from '../../errors.js';
import type { BoomerangMessage } from '../../message/message.js';

const invalid = (reason: string) => new UnrecoverableError(`webhook message ${reason}`);
const preview = (value: unknown) => String(JSON.stringify(value)).slice(0, 100);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
// For values that may hold headers (and so tokens): only their kind is shown.
const kindOf = (value: unknown) => (Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value);

/**
 * What is wrong with a url, never its text: webhook paths and queries often hold the secret
 * (Slack, Discord, `?token=`), and the reason ends up in the parked copy and the log.
 */
function whatUrl(url: unknown, parsed: URL | undefined): string {
  if (typeof url !== 'string') return `got ${kindOf(url)}`;
  if (parsed === undefined) return `got a string of ${url.length} characters that is not an absolute URL`;
  return `got a URL with the scheme ${JSON.stringify(parsed.protocol)}`;
}

/** Checks the message against `{ url, method?, headers?, body? }` and builds the request it asks for. */
function toRequest(message: BoomerangMessage): Request {
  let input: unknown;
  try {
    input = JSON.parse(message.body.toString('utf8'));
  } catch {
    // V8's parse error quotes the text around the fault, which may be a header value.
    throw invalid(`body is not valid JSON (${message.body.length} bytes)`);
  }
  if (!isObject(input)) throw invalid(`body is not a JSON object: got ${kindOf(input)}`);
  const { url, method = 'POST', headers = {}, body } = input;
  const target = typeof url === 'string' && URL.canParse(url) ? new URL(url) : undefined;
  if (target?.protocol !== 'http:' && target?.protocol !== 'https:')
    throw invalid(`has no valid url: ${whatUrl(url, target)}; expected an absolute http(s) URL`);
  // Not echoed: credentials in a URL are secrets, and fetch refuses them anyway.
  if (target.username || target.password) throw invalid('has a url with credentials; send them in headers');
  if (typeof method !== 'string') throw invalid(`has a method that is not a string: got ${preview(method)}`);
  if (!isObject(headers)) throw invalid(`has headers that are not an object of strings: got ${kindOf(headers)}`);
  const requestHeaders = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    // Header values may hold tokens: reasons name the header, never its value.
    if (typeof value !== 'string') throw invalid(`has header "${name}" that is not a string`);
    try {
      requestHeaders.append(name, value);
    } catch {
      throw invalid(`has header "${name}" that is not a valid HTTP header name or value`);
    }
  }
  const isRaw = typeof body === 'string' || body === undefined || body === null;
  if (!isRaw && !requestHeaders.has('content-type')) requestHeaders.set('content-type', 'application/json');
  try {
    return new Request(target, { method, headers: requestHeaders, body: isRaw ? body : JSON.stringify(body) });
  } catch (error) {
    // Origin only, as above, should fetch's message ever quote the URL.
    throw invalid(`is not a valid HTTP request: ${(error as Error).message.replaceAll(target.href, target.origin)}`);
  }
}

export { toRequest };
