import type { MessageProperties } from 'amqplib';

/** What a handler sees of one delivery. The body is never parsed unless the handler asks. */
type BoomerangMessage = {
  readonly body: Buffer;
  /** Parses the body as UTF-8 JSON; throws `UnrecoverableError` when it is not JSON. */
  json<T = unknown>(): T;
  /** User headers as they arrived (Boomerang's own bookkeeping headers included). */
  readonly headers: Readonly<Record<string, unknown>>;
  /** The AMQP properties (frozen; the object also holds the headers, which `headers` gives). */
  readonly properties: Readonly<Omit<MessageProperties, 'headers'>>;
  /** How many times this message was retried before this attempt (0 on the first attempt). */
  readonly retryNo: number;
  /** The queue it was taken from. */
  readonly queue: string;
  /** The routing key it was first published with (kept across retries). */
  readonly routingKey: string;
  /** The exchange it was first published to (kept across retries; '' is the default exchange). */
  readonly exchange: string;
};

/** Per-attempt context handed to the handler next to the message. */
type HandlerContext = {
  /** Aborted when the invocation's time budget runs out: stop and throw. */
  readonly signal: AbortSignal;
  /** Name of the running function (for logs). */
  readonly functionName: string;
};

/**
 * The team's business logic: resolve to ack, throw to retry or park.
 * A thrown error with `retryable === false` is parked at once; one with a numeric `retryAfterMs` is
 * retried no sooner than that; anything else is retried with backoff until the retries are spent.
 * @example
 * export async function handle(message, { signal }) {
 *   const order = message.json<{ id: string }>();
 *   await fetch(`https://partner.example/orders/${order.id}`, { method: 'POST', signal });
 * }
 */
type Handler = (message: BoomerangMessage, context: HandlerContext) => Promise<void> | void;

export type { BoomerangMessage, Handler, HandlerContext };
