import { randomUUID } from 'node:crypto';
import type { ConfirmChannel, Message, Options } from 'amqplib';
import { PublishError } from '../errors.js';
import { BoomerangHeader } from '../headers.js';

/** The port the dispositions publish through; tests pass a fake. */
interface Publisher {
  /** Resolves on a positive confirm with no `basic.return`; rejects with `PublishError` otherwise. */
  publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void>;
}

type Pending = {
  returned: boolean;
  readonly timer: NodeJS.Timeout;
  readonly resolve: () => void;
  readonly reject: (error: PublishError) => void;
};

/**
 * Publishes with `mandatory` on a confirm channel and streams the confirms: many publishes are in
 * flight at once and each settles on its own ack (one awaited confirm per message would cap a channel
 * near 1k msg/s). The broker sends `basic.return` before the ack of an unroutable message, so a
 * return marks its publish (paired through a per-copy id header) and the later ack rejects it.
 */
class ConfirmPublisher implements Publisher {
  private readonly pending = new Map<string, Pending>();
  private closedReason: string | undefined;

  public constructor(
    private readonly channel: ConfirmChannel,
    private readonly timeoutMs: number,
  ) {
    channel.on('return', (message: Message) => this.onReturn(message));
    channel.on('close', () => this.failAll('channel-closed', 'the channel closed before the broker confirmed'));
    channel.on('error', (error: Error) => {
      this.closedReason = error.message;
    });
  }

  public publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void> {
    const copyId = randomUUID();
    const headers = { ...options.headers, [BoomerangHeader.copyId]: copyId };
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(copyId, new PublishError(`no confirm within ${this.timeoutMs} ms (PUBLISH_TIMEOUT_MS)`, 'timeout'));
      }, this.timeoutMs);
      this.pending.set(copyId, { returned: false, timer, resolve, reject });
      try {
        this.channel.publish(exchange, routingKey, content, { ...options, headers, mandatory: true }, (err: unknown) => {
          const entry = this.pending.get(copyId);
          if (err) this.settle(copyId, new PublishError(`the broker nacked the publish to ${describe(exchange, routingKey)}`, 'nacked'));
          else if (entry?.returned) this.settle(copyId, new PublishError(`unroutable: nothing is bound for ${describe(exchange, routingKey)} (was a queue deleted?)`, 'returned'));
          else this.settle(copyId);
        });
      } catch (error) {
        // amqplib throws synchronously when the channel is closed or the headers do not fit a frame.
        this.settle(copyId, new PublishError(`could not publish to ${describe(exchange, routingKey)}: ${(error as Error).message}`, 'rejected-locally', { cause: error }));
      }
    });
  }

  /** Publishes still waiting for their confirm. */
  public get inFlight(): number {
    return this.pending.size;
  }

  private onReturn(message: Message): void {
    const copyId = message.properties.headers?.[BoomerangHeader.copyId];
    const entry = typeof copyId === 'string' ? this.pending.get(copyId) : undefined;
    if (entry) entry.returned = true;
  }

  private settle(copyId: string, error?: PublishError): void {
    const entry = this.pending.get(copyId);
    if (!entry) return;
    this.pending.delete(copyId);
    clearTimeout(entry.timer);
    if (error) entry.reject(error);
    else entry.resolve();
  }

  private failAll(reason: PublishError['reason'], text: string): void {
    const detail = this.closedReason ? `${text} (${this.closedReason})` : text;
    for (const copyId of [...this.pending.keys()]) this.settle(copyId, new PublishError(detail, reason));
  }
}

function describe(exchange: string, routingKey: string): string {
  return exchange === '' ? `queue "${routingKey}"` : `exchange "${exchange}" with key "${routingKey}"`;
}

export { ConfirmPublisher };
export type { Publisher };
