/**
 * Parks a message no copy may carry: its body is over `MAX_MESSAGE_BYTES`, so neither a retry copy
 * nor a parked copy can be published under the limit. Left in the work queue it would come back
 * first in every invocation, run its handler against the partner again, and hold up the messages
 * behind it.
 *
 * Where the work queue dead-letters to its parking lot (the default exchange with the parking lot as
 * routing key, as `topology apply` creates it), the message is rejected and the broker moves it: body,
 * properties and headers as they are, plus an `x-death` entry naming the work queue and `rejected`
 * (at-least-once on a quorum queue declared with `x-dead-letter-strategy: at-least-once`). Before the
 * reject, a park note (message/park-note.ts: the failure, without the body) goes to the lot's notes
 * queue, confirmed, so that why it was parked is in the lot's reach, not only in a log.
 *
 * Otherwise (no such dead-lettering, or no note confirmed) the closest real means: a parked copy
 * published on a channel of its own without the limit (the broker took this very body from its
 * producer, and it counts the body alone), which carries why in its headers. If the broker refuses
 * that too, a message the work queue dead-letters is rejected all the same (parked, the reason in the
 * log line only); any other goes back to the work queue and the error says what to do.
 */
import type { ChannelModel, ConsumeMessage } from 'amqplib';
import { ConfirmPublisher } from '../amqp/confirm-publisher.js';
import { type CopyContext, parkInput, publishFailureCopy, type Target, tryPublishCopy } from '../copy/failure-copy.js';
import { describeDelivery, type Failure, failureOf } from '../copy/failure.js';
import { buildParkNote, parkNotesQueue } from '../message/park-note.js';
import type { Logger } from '../observability/logger.js';
import { lendChannels } from '../topology/broker-ops.js';
import { workQueueSpec } from '../topology/plan.js';
import { readArguments } from '../topology/read-arguments.js';
import type { TopologyOptions } from '../topology/types.js';
import type { DeliveryLedger } from './delivery-ledger.js';
import type { ParkVerdict } from '../core/verdict.js';

type UncopyableDeps = {
  readonly connection: ChannelModel;
  readonly ledger: DeliveryLedger;
  readonly log: Logger;
  readonly topology: TopologyOptions;
  readonly publishTimeoutMs: number;
  /** The copy context of the invocation: its publisher sends the park note; a copy goes through one without the limit. */
  readonly copyContext: CopyContext;
};

/** Makes the invocation's `parkUncopyable`: the work queue's arguments are read at its first use. */
function createUncopyablePark(deps: UncopyableDeps): (delivery: ConsumeMessage, verdict: ParkVerdict) => Promise<void> {
  let deadLetters: Promise<boolean> | undefined;
  return async (delivery, verdict) => {
    const fields = { ...describeDelivery(delivery), bodyBytes: delivery.content.length, reason: verdict.reason, errorName: verdict.error.name };
    const failure = failureOf(delivery, verdict);
    const { parkingQueue } = deps.topology;
    deadLetters ??= deadLettersToParkingLot(deps.connection, deps.topology);
    const dead = await deadLetters;
    if (dead && (await tryPublishCopy(deps.copyContext, planParkNote(deps.copyContext, failure)))) {
      if (deps.ledger.reject(delivery)) {
        deps.log.warn('message parked by the broker, without a copy: its body is over MAX_MESSAGE_BYTES; the work queue dead-letters it to the parking lot', {
          ...fields,
          parkingQueue,
          parkNote: parkNotesQueue(parkingQueue),
        });
      }
      return;
    }
    try {
      await withUnlimitedPublisher(deps, (ctx) => publishFailureCopy(ctx, failure));
      deps.ledger.ack(delivery, 'parked');
      if (dead)
        deps.log.warn(`no park note confirmed (is ${parkNotesQueue(parkingQueue)} missing? topology apply creates it): parked as a copy instead`, fields);
    } catch (error) {
      if (dead) {
        if (deps.ledger.reject(delivery))
          deps.log.error('message parked by the broker without a park note or a copy: why it was parked is only in this line', {
            ...fields,
            parkingQueue,
            cause: (error as Error).message,
          });
        return;
      }
      deps.ledger.requeue(delivery, `not parked: no dead-lettering to the parking lot, and the broker refused a copy (${(error as Error).message})`);
      deps.log.error(
        `message over MAX_MESSAGE_BYTES could not be parked: ${deps.topology.workQueue} does not dead-letter to ${parkingQueue}, and the broker refused a copy; it stays in the work queue. Let the work queue dead-letter to the parking lot (topology apply creates it so), or move the message out by hand`,
        { ...fields, cause: (error as Error).message },
      );
    }
  };
}

/** The park note of a failure whose message the broker parks, to the lot's notes queue (see message/park-note.ts). */
function planParkNote(ctx: CopyContext, failure: Failure): Target {
  const reason = failure.decision.kind === 'park' ? failure.decision.reason : 'parked';
  const copy = buildParkNote(failure.delivery, parkInput(ctx, failure, reason, ctx.now()));
  return { exchange: '', routingKey: parkNotesQueue(ctx.parkingQueue), copy, outcome: 'parked' };
}

/** Whether the work queue's own arguments dead-letter to the parking lot (a policy cannot be read, and does not count). */
async function deadLettersToParkingLot(connection: ChannelModel, topology: TopologyOptions): Promise<boolean> {
  const lender = lendChannels(connection);
  try {
    const { current } = await readArguments(lender, { kind: 'queue', spec: workQueueSpec(topology) });
    return current !== undefined && current['x-dead-letter-exchange'] === '' && current['x-dead-letter-routing-key'] === topology.parkingQueue;
  } catch {
    return false;
  } finally {
    await lender.close();
  }
}

/** Runs `use` with a copy context whose publisher has a confirm channel of its own and no size limit. */
async function withUnlimitedPublisher<T>(deps: UncopyableDeps, use: (ctx: CopyContext) => Promise<T>): Promise<T> {
  const channel = await deps.connection.createConfirmChannel();
  // A refusal closes this channel only; its error is the publish's rejection.
  channel.on('error', () => undefined);
  try {
    return await use({ ...deps.copyContext, publisher: new ConfirmPublisher(channel, deps.publishTimeoutMs) });
  } finally {
    await channel.close().catch(() => undefined);
  }
}

export { createUncopyablePark };
