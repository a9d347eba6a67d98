/**
 * `AMQP_URL` read and checked at start, so a bad value is a `ConfigError` naming the variable, not
 * amqplib's "Expected amqp: or amqps: as the protocol" at the first connect (amqplib reads a URL
 * that does not parse, an invalid port included, as one with no protocol). Every URL shown here has
 * its password redacted.
 */
import { ConfigError } from '../errors.js';
import { redactUrl } from '../observability/redact.js';

const SCHEME = /^amqps?:\/\/[^/]/i;
// The port is what follows the host, which follows the last `@` (the credentials may hold `@` and `:`).
const HOST_PORT = /^amqps?:\/\/(?<credentials>.*@)?(?:\[[^\]]*\]|[^:/?#[]*)(?::(?<port>[^/?#]*))?/i;

/**
 * The URLs of one `AMQP_URL` value (comma-separated for a cluster), each with an amqp:// or amqps://
 * scheme, a port from 1 to 65535 when it names one, and a shape `new URL` (and so amqplib) reads.
 * @example parseAmqpUrls('amqps://app:pw@mq-1:5671, amqps://app:pw@mq-2:5671') // ['amqps://app:pw@mq-1:5671', 'amqps://app:pw@mq-2:5671']
 * @example parseAmqpUrls('amqp://guest:pw@127.0.0.1:56720') // throws ConfigError: AMQP_URL has port "56720" ...
 */
function parseAmqpUrls(value: string): string[] {
  const urls = value
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  if (urls.length === 0) throw new ConfigError('AMQP_URL is set but holds no URL');
  // Every scheme first: a comma inside a password leaves a piece without one, and that check shows
  // the least of the password.
  for (const url of urls) {
    if (!SCHEME.test(url)) throw new ConfigError(`AMQP_URL must be amqp:// or amqps:// URLs separated by commas; got ${JSON.stringify(redactUrl(url))}`);
  }
  for (const url of urls) checkPortAndShape(url);
  return urls;
}

function checkPortAndShape(url: string): void {
  const match = HOST_PORT.exec(url);
  const port = match?.groups?.port;
  if (match !== null && port !== undefined && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65_535)) {
    // Without credentials, "amqp://user:secret" reads as host "user" and port "secret": hide it.
    const hidden = match.groups?.credentials === undefined;
    const end = match[0].length;
    const shown = hidden ? `${url.slice(0, end - port.length)}***${url.slice(end)}` : redactUrl(url);
    throw new ConfigError(
      `AMQP_URL has ${hidden ? 'a port' : `port ${JSON.stringify(port)}`} in ${JSON.stringify(shown)} that is not a whole number from 1 to 65535 (RabbitMQ takes AMQP on 5672, or 5671 with amqps://)`,
    );
  }
  try {
    new URL(url);
  } catch {
    throw new ConfigError(
      `AMQP_URL ${JSON.stringify(redactUrl(url))} is not a valid URL: check the host name, and percent-encode special characters in the user name, password and vhost (@ as %40, / as %2F, : as %3A)`,
    );
  }
}

export { parseAmqpUrls };
