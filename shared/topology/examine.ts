/**
 * The look at one existing queue or exchange that `applyTopology` and `verifyTopology` share: every
 * differing argument (not only the first), its message count, and for the parking lot and the work
 * queue whether their delivery limit can drop messages.
 */
import { type ChannelLender, type PlannedEntity } from './broker-ops.js';
import type { ArgumentDifference } from './types.js';
import { isTolerated, parkingLotCheck, type QueueCheck, workQueueCheck } from './queue-checks.js';
import { readArguments } from './read-arguments.js';

type Examined = QueueCheck & {
  /** The differences apply would report; none for the work queue, whose arguments belong to its team. */
  readonly differences: readonly ArgumentDifference[];
};

/** What the broker has, compared with `entity`'s plan; `parkingQueue` is where a work-queue policy would dead-letter. */
async function examineExisting(lender: ChannelLender, entity: PlannedEntity, major: number | undefined, parkingQueue: string): Promise<Examined> {
  const reading = await readArguments(lender, entity);
  if (entity.kind === 'exchange') return { differences: reading.differences, detail: reading.incomplete };
  const { name, role } = entity.spec;
  if (role === 'work') return { differences: [], ...workQueueCheck(name, parkingQueue, reading.current, major, reading.incomplete) };
  const differences = reading.differences.filter((d) => !isTolerated(role, d, major));
  if (role === 'parking') return { differences, ...parkingLotCheck(name, reading.current, major, reading.incomplete) };
  return { differences, detail: reading.incomplete };
}

export { examineExisting };
export type { Examined };
