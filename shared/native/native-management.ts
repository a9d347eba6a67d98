import type { Connection } from 'rhea';
import type { Config } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { Amqp10Management } from './amqp10-management.js';
import { checkNativeTopology } from './native-topology-check.js';

/** What one native invocation asks of the management API. */
type NativeManagement = {
  /** The management API, once attached; undefined when it could not be (only off the first invocation's path). */
  api(): Promise<Amqp10Management | undefined>;
  /**
   * Resolves once the topology check passed (at once when there is none); rejects with the check's
   * `TopologyDriftError`, or a `BrokerConnectionError` when it could not ask.
   */
  readonly checked: Promise<void>;
  /**
   * The parking lot's depth now (the `parkedDepth` metric), or `undefined` when it cannot be read
   * within `waitMs`: never a failure.
   */
  parkedDepth(waitMs: number): Promise<number | undefined>;
};

/**
 * Starts attaching the management API for one native invocation, and returns at once: the caller does
 * its own requests meanwhile. With `checkTopology` (the first invocation of a container) the work
 * queue and the parking lot are checked as soon as it attached: the caller awaits `checked` before it
 * takes anything. Without it, a failure to attach only leaves `parkedDepth` unknown, as a failed
 * passive declare does in pull mode.
 * @example
 * const management = openNativeManagement(broker.connection, { config, log, checkTopology: true });
 * await management.checked;
 * // ... settle ...
 * tally.parkedDepth(await management.parkedDepth(1000));
 */
function openNativeManagement(connection: Connection, options: { config: Config; log: Logger; checkTopology: boolean }): NativeManagement {
  const { config, log } = options;
  const attaching = Amqp10Management.open(connection);
  const opened: Promise<Amqp10Management | undefined> = attaching.catch(() => undefined);
  const checked = options.checkTopology
    ? attaching.then((management) => checkNativeTopology((name) => management.getQueue(name), config, log))
    : Promise.resolve();
  // Awaited by the caller before anything is taken; a rejection seen first elsewhere must not count as unhandled.
  checked.catch(() => undefined);
  return {
    api: () => opened,
    checked,
    async parkedDepth(waitMs) {
      const read = async (): Promise<number | undefined> => {
        const lot = await (await opened)?.getQueue(config.parkingQueue, waitMs).catch(() => undefined);
        return lot?.messageCount;
      };
      // The link pair may still be attaching (or never answer): the wait covers that too.
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<undefined>((resolve) => {
        timer = setTimeout(resolve, waitMs, undefined);
      });
      try {
        return await Promise.race([read(), waited]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export { openNativeManagement };
export type { NativeManagement };
