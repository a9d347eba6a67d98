/**
 * Settles AMQP 1.0 deliveries through rhea 3.0.5 without its disposition merge bug.
 *
 * rhea writes the settlements of one event-loop pass together (`write_dispositions` in lib/session.js,
 * run in a `process.nextTick` scheduled by the pass's first `delivery.update`). It merges deliveries with
 * consecutive ids into one disposition range, and skips the outcome comparison while the range holds
 * one delivery, so the second delivery is sent with the first one's outcome: a success settled right
 * after a retry is retried, and a retry settled right after a success is accepted (its retry lost).
 * Measured on RabbitMQ 4.3.6 by test/integration/rhea-disposition-merge.test.ts.
 *
 * The writer therefore never updates two deliveries with consecutive ids in one pass unless both are
 * accepted (rhea merges only accepted outcomes correctly, and a run of successes is the fast path).
 * A delivery that would break that waits for the next pass: a `setImmediate`, which runs after
 * rhea's `nextTick` write.
 *
 * rhea also writes each frame to the socket as it encodes it: a pass's disposition and the flow frame
 * that gives the credit back were two system calls, and on the retry path, where neighbours never
 * share a pass, every settlement was one. The writer holds the socket (`cork`) from a pass's first
 * settlement to the pass's end, so what rhea writes in the pass leaves in one write (`uncork`), in
 * the same turn of the event loop.
 */

/** How one delivery is settled. */
type Amqp10Outcome =
  | { readonly kind: 'accepted' }
  | { readonly kind: 'released' }
  | {
      readonly kind: 'modified';
      readonly deliveryFailed: boolean;
      readonly undeliverableHere: boolean;
      /** Stay on the message (RabbitMQ 4.3); `x-opt-delivery-time` (epoch ms) delays it until then. */
      readonly annotations: Readonly<Record<string, unknown>>;
    };

/** The part of rhea's `Delivery` the writer uses (tests pass fakes). */
interface SettleableDelivery {
  /** The session's delivery id: consecutive for deliveries that follow each other. */
  readonly id: number;
  accept(): void;
  release(): void;
  modified(params: { delivery_failed: boolean; undeliverable_here: boolean; message_annotations: Record<string, unknown> }): void;
}

type Settlement = { readonly delivery: SettleableDelivery; readonly outcome: Amqp10Outcome };

/** The connection's socket, as far as the writer holds its output (Node's `cork`/`uncork`). */
interface CorkableOutput {
  cork(): void;
  uncork(): void;
}

/**
 * Hands settlements to rhea as fast as is safe. Every settlement of a connection's deliveries must go
 * through one writer (and the receiver must not auto-accept), or the writer cannot see what rhea merges.
 * @example
 * const writer = new SettlementWriter();
 * receiver.on('message', (context) => writer.settle(context.delivery, { kind: 'accepted' }));
 * // before closing:
 * await writer.flushed();
 */
class SettlementWriter {
  /** Ids updated in this pass, each with whether it was accepted. */
  private pass = new Map<number, boolean>();
  private held: Settlement[] = [];
  private passEnd: NodeJS.Immediate | undefined;
  private waiters: Array<() => void> = [];

  /** @param output the socket under rhea's connection: held for the pass, so that every frame of a pass leaves in one write. */
  public constructor(private readonly output?: CorkableOutput) {}

  /** Settles `delivery` now, or in a later pass when it would merge with a neighbour of another outcome. */
  public settle(delivery: SettleableDelivery, outcome: Amqp10Outcome): void {
    if (!this.write(delivery, outcome)) this.held.push({ delivery, outcome });
  }

  /** Settlements handed to the writer and not yet to rhea. */
  public get pending(): number {
    return this.held.length;
  }

  /**
   * Resolves when every settlement handed to the writer has been given to rhea, rhea's pass is over
   * (its nextTick write has run) and the socket was let go, so closing the link or connection after it loses none.
   */
  public flushed(): Promise<void> {
    if (this.held.length === 0 && this.passEnd === undefined) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Updates the delivery unless a neighbour id of another outcome was updated in this pass. */
  private write(delivery: SettleableDelivery, outcome: Amqp10Outcome): boolean {
    const accepted = outcome.kind === 'accepted';
    if (this.clashes(delivery.id - 1, accepted) || this.clashes(delivery.id + 1, accepted)) return false;
    this.pass.set(delivery.id, accepted);
    if (this.passEnd === undefined) {
      this.passEnd = setImmediate(() => this.nextPass());
      this.output?.cork();
    }
    if (outcome.kind === 'accepted') delivery.accept();
    else if (outcome.kind === 'released') delivery.release();
    else
      delivery.modified({
        delivery_failed: outcome.deliveryFailed,
        undeliverable_here: outcome.undeliverableHere,
        // Handed over as it is: an outcome's annotations are made for its one delivery and never changed.
        message_annotations: outcome.annotations as Record<string, unknown>,
      });
    return true;
  }

  /** Whether the delivery `id`, updated in this pass, would merge with one of the given outcome into a wrong range. */
  private clashes(id: number, accepted: boolean): boolean {
    const neighbourAccepted = this.pass.get(id);
    return neighbourAccepted !== undefined && !(neighbourAccepted && accepted);
  }

  /** rhea has written the last pass: write what was held, in order, as far as is safe. */
  private nextPass(): void {
    this.passEnd = undefined;
    this.output?.uncork();
    this.pass = new Map();
    const held = this.held;
    this.held = [];
    for (const settlement of held) if (!this.write(settlement.delivery, settlement.outcome)) this.held.push(settlement);
    // A pass opened for what was held ends in a later turn: its frames leave the socket only then.
    if (this.held.length > 0 || this.passEnd !== undefined) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

export { SettlementWriter };
export type { Amqp10Outcome, CorkableOutput, SettleableDelivery };
