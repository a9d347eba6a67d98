/**
 * What `boomerang publish` sends, read from its flags (pure): the body's bytes as given, the headers
 * and properties, and how many. Nothing is guessed but the content type of a body that is JSON.
 */
import type { Options } from 'amqplib';
import { UsageError } from '../errors.js';

/** The message properties a flag may set (`--property name=value`), with how each is written. */
const PROPERTIES = {
  contentType: 'text',
  contentEncoding: 'text',
  correlationId: 'text',
  replyTo: 'text',
  expiration: 'text',
  messageId: 'text',
  type: 'text',
  appId: 'text',
  priority: 'integer',
  timestamp: 'integer',
} as const satisfies Record<string, 'text' | 'integer'>;

type PropertyName = keyof typeof PROPERTIES;

/** One message as `publish` sends it `count` times, each with its own message id unless one is given. */
type PublishPlan = {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  readonly properties: Readonly<Partial<Record<PropertyName, string | number>>>;
  readonly count: number;
};

/**
 * `name=value` pairs (`--header tenant=acme`) as a record; a pair without `=` or with an empty name is
 * bad usage naming the flag. A value may itself hold `=`.
 * @example pairs('header', ['tenant=acme', 'q=a=b']) // { tenant: 'acme', q: 'a=b' }
 */
function pairs(flag: string, given: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of given) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--${flag} takes name=value; got ${JSON.stringify(pair)}`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

/**
 * The properties of `--property name=value` flags, each checked: a known name (the error lists them)
 * and, for `priority` (0-255) and `timestamp` (seconds), a whole number.
 * @example propertiesOf(['type=order', 'priority=3']) // { type: 'order', priority: 3 }
 */
function propertiesOf(given: readonly string[]): Partial<Record<PropertyName, string | number>> {
  const out: Partial<Record<PropertyName, string | number>> = {};
  for (const [name, value] of Object.entries(pairs('property', given))) {
    if (!Object.hasOwn(PROPERTIES, name))
      throw new UsageError(`--property ${name}: no such property; the properties are ${Object.keys(PROPERTIES).join(', ')}`);
    const kind = PROPERTIES[name as PropertyName];
    if (kind === 'text') {
      out[name as PropertyName] = value;
      continue;
    }
    const max = name === 'priority' ? 255 : Number.MAX_SAFE_INTEGER;
    if (!/^\d+$/.test(value) || Number(value) > max)
      throw new UsageError(`--property ${name} must be a whole number from 0 to ${max}; got ${JSON.stringify(value)}`);
    out[name as PropertyName] = Number(value);
  }
  return out;
}

/** Whether the bytes are one JSON value: then the content type defaults to application/json. */
function isJson(body: Buffer): boolean {
  try {
    JSON.parse(body.toString('utf8'));
    return body.length > 0;
  } catch {
    return false;
  }
}

/**
 * The options every message of a plan shares: persistent, the plan's headers and properties, and
 * `application/json` for a JSON body without a content type.
 * @example sharedOptions({ body: Buffer.from('{}'), headers: {}, properties: {}, count: 1 }) // { persistent: true, contentType: 'application/json', headers: {} }
 */
function sharedOptions(plan: PublishPlan): Options.Publish {
  const { properties } = plan;
  return {
    persistent: true,
    ...(properties.contentType === undefined && isJson(plan.body) ? { contentType: 'application/json' } : {}),
    ...properties,
    headers: { ...plan.headers },
  } as Options.Publish;
}

/**
 * The message id of message `index` (0-based): the one given (the same on every copy), else `<runId>-<index>`.
 * @example messageIdOf({ properties: {} } as PublishPlan, 'r1', 2) // 'r1-2'
 */
function messageIdOf(plan: PublishPlan, runId: string, index: number): string {
  const given = plan.properties.messageId;
  return given === undefined ? `${runId}-${index}` : String(given);
}

export { messageIdOf, pairs, PROPERTIES, propertiesOf, sharedOptions };
export type { PublishPlan };
