import type { MessageProperties, Options } from 'amqplib';
import type { Copy } from '../message/copy-message.js';
import { BoomerangHeader, STRIPPED_HEADERS } from '../message/headers.js';
import { annotationOf, isNativeBookkeeping, NATIVE_RETRY_NO } from './park-fields.js';
import type { Parked } from './parked-view.js';

/** Headers the broker sets on a delivery, or that would route a copy to other queues (`CC`, `BCC`). */
const DELIVERY_HEADERS: ReadonlySet<string> = new Set(['x-delivery-count', 'x-acquired-count', 'CC', 'BCC', BoomerangHeader.copyId]);

/** Boomerang headers a replayed message keeps: where it was first published (rules and handlers read them). */
const KEPT_ON_REPLAY: ReadonlySet<string> = new Set([BoomerangHeader.originalExchange, BoomerangHeader.originalRoutingKey]);
/**
 * Kept too with `--keep-count`: the message carries on with its retry history, a native park's
 * (annotations) as well as a copy's. Never its failed-settlement count: that is checked against the
 * broker's `x-delivery-count`, which starts over on the replayed message.
 */
const KEPT_WITH_COUNT: ReadonlySet<string> = new Set([
  BoomerangHeader.firstFailureAt,
  BoomerangHeader.lastFailureAt,
  BoomerangHeader.failureHistory,
  NATIVE_RETRY_NO,
  annotationOf(BoomerangHeader.firstFailureAt),
  annotationOf(BoomerangHeader.lastFailureAt),
  annotationOf(BoomerangHeader.failureHistory),
]);

/** How {@link replayCopy} treats the retry count. */
type ReplayOptions = {
  /** `RETRY_HEADER`: removed, so the message starts over with 0 retries, unless `keepCount`. */
  readonly retryHeader: string;
  readonly keepCount: boolean;
};

/**
 * A parked message made ready for its work queue again: persistent, the park headers (`boomerang-*`
 * error, attempts, reason, times...) and the broker's dead-letter headers removed, the retry count
 * removed unless `keepCount`. A native park's bookkeeping goes too (`x-opt-boomerang-*`,
 * `x-opt-delivery-time`): on RabbitMQ 4.3 a 0-9-1 `x-` header reaches an AMQP 1.0 consumer as a
 * message annotation, so native mode would read the old retry count back. Trace context and the
 * team's headers (other `x-opt-` ones included) travel unchanged.
 */
function replayCopy(message: Parked, options: ReplayOptions): Copy {
  const headers = withoutHeaders(message.properties.headers, (name) => {
    if (options.keepCount && (name === options.retryHeader || KEPT_WITH_COUNT.has(name))) return false;
    if (name === options.retryHeader || STRIPPED_HEADERS.has(name) || DELIVERY_HEADERS.has(name) || isNativeBookkeeping(name)) return true;
    return name.startsWith('boomerang-') && !KEPT_ON_REPLAY.has(name);
  });
  return { content: message.content, options: { ...properties(message.properties), persistent: true, headers } };
}

function withoutHeaders(headers: MessageProperties['headers'], drop: (name: string) => boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (!drop(name)) out[name] = value;
  return out;
}

const COPIED = ['contentType', 'contentEncoding', 'deliveryMode', 'priority', 'correlationId', 'replyTo', 'messageId', 'timestamp', 'type', 'appId'] as const;

function properties(p: MessageProperties): Options.Publish {
  const options: Record<string, unknown> = {};
  for (const key of COPIED) if (p[key] !== undefined) options[key] = p[key];
  return options as Options.Publish;
}

export { replayCopy };
