import type { ConfirmChannel, Options } from 'amqplib';
import { PublishError } from '../errors.js';

/**
 * Publishes one message at a time on a confirm channel (`mandatory`), and adds nothing to it. The
 * broker sends a `basic.return` before the ack of the publish it belongs to, so with one publish in
 * flight a return is that publish's: no pairing header is needed, unlike `ConfirmPublisher`, whose
 * `boomerang-copy-id` would be one more change to a message an operator moves out of the parking lot.
 */
class LonePublisher {
  private returned = false;
  private busy = false;
  private closedReason: string | undefined;

  public constructor(
    private readonly channel: ConfirmChannel,
    private readonly timeoutMs: number,
  ) {
    channel.on('return', () => {
      this.returned = true;
    });
    channel.on('error', (error: Error) => {
      this.closedReason = error.message;
    });
  }

  /** Resolves on a positive confirm with no return; rejects with `PublishError` otherwise. */
  public async publish(queue: string, content: Buffer, options: Options.Publish): Promise<void> {
    if (this.busy) throw new PublishError('LonePublisher publishes one message at a time', 'rejected-locally');
    this.busy = true;
    this.returned = false;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new PublishError(`no confirm within ${this.timeoutMs} ms (PUBLISH_TIMEOUT_MS)`, 'timeout')), this.timeoutMs);
        const onClose = (): void =>
          reject(
            new PublishError(
              `the channel closed before the broker confirmed${this.closedReason === undefined ? '' : ` (${this.closedReason})`}`,
              'channel-closed',
            ),
          );
        this.channel.once('close', onClose);
        const done = (error?: PublishError): void => {
          clearTimeout(timer);
          this.channel.off('close', onClose);
          if (error === undefined) resolve();
          else reject(error);
        };
        try {
          this.channel.publish('', queue, content, { ...options, mandatory: true }, (err: unknown) => {
            if (err) done(new PublishError(`the broker nacked the publish to queue "${queue}"`, 'nacked'));
            else if (this.returned) done(new PublishError(`unroutable: there is no queue "${queue}"`, 'returned'));
            else done();
          });
        } catch (error) {
          // amqplib throws synchronously when the channel is closed or the headers do not fit its 64 KiB encoding buffer.
          done(new PublishError(`could not publish to queue "${queue}": ${(error as Error).message}`, 'rejected-locally', { cause: error }));
        }
      });
    } finally {
      this.busy = false;
    }
  }
}

export { LonePublisher };
