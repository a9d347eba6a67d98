/**
 * The look at one existing queue or exchange that `applyTopology` and `verifyTopology` share: every
 * differing argument (not only the first), its message count, and for the parking lot and the work
 * queue whether their delivery limit can drop messages. A `native` work queue is checked for what the
 * mode needs, from its arguments and (when `readPolicy` is given) its policy.
 */
import type { ChannelLender, PlannedEntity } from './broker-ops.js';
import { nativeWorkQueueCheck } from './native-check.js';
import type { ArgumentDifference, PolicyReader } from './types.js';
import { isTolerated, parkingLotCheck, type QueueCheck, workQueueCheck } from './queue-checks.js';
import { readArguments } from './read-arguments.js';

type Examined = QueueCheck & {
  /** The differences apply would report; none for the work queue, whose arguments belong to its team. */
  readonly differences: readonly ArgumentDifference[];
};

/** What the look at one entity needs to know besides it. */
type ExamineContext = {
  /** The broker's major version, when it said it. */
  readonly major: number | undefined;
  /** Where a work-queue policy would dead-letter. */
  readonly parkingQueue: string;
  /** Reads a native work queue's policy (AMQP cannot); without it, its arguments alone are judged. */
  readonly readPolicy?: PolicyReader;
};

/** What the broker has, compared with `entity`'s plan. */
async function examineExisting(lender: ChannelLender, entity: PlannedEntity, context: ExamineContext): Promise<Examined> {
  const { major, parkingQueue, readPolicy } = context;
  const reading = await readArguments(lender, entity);
  if (entity.kind === 'exchange') return { differences: reading.differences, detail: reading.incomplete };
  const { name, role } = entity.spec;
  if (role === 'work' && !entity.spec.onlyIfMissing) {
    const policy = await readPolicy?.(name);
    return nativeWorkQueueCheck(entity.spec, reading.current, policy, { incomplete: reading.incomplete, readDifferences: reading.differences });
  }
  if (role === 'work') return { differences: [], ...workQueueCheck(name, parkingQueue, reading.current, major, reading.incomplete) };
  const differences = reading.differences.filter((d) => !isTolerated(role, d, major));
  if (role === 'parking') return { differences, ...parkingLotCheck(name, reading.current, major, reading.incomplete) };
  return { differences, detail: reading.incomplete };
}

export { examineExisting };
export type { ExamineContext };
