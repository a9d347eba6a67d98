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
   * The parking lot's depth now (the `parkedDepth` metric), or `undefined` when it cannot be read
   * within `waitMs`: never a failure.
   */
  parkedDepth(waitMs: number): Promise<number | undefined>;
};

/**
 * Opens the management API for one native invocation. With `checkTopology` (the first invocation of a
 * container) it checks the work queue and the parking lot first and throws the check's
 * `TopologyDriftError`, or a `BrokerConnectionError` when it cannot ask: nothing is taken unchecked.
 * Without it, the link pair attaches beside the work queue's receiver, off the invocation's path, and a
 * failure only leaves `parkedDepth` unknown, as a failed passive declare does in pull mode.
 * @example
 * const management = await openNativeManagement(broker.connection, { config, log, checkTopology: true });
 * // ... settle ...
 * tally.parkedDepth(await management.parkedDepth(1000));
 */
async function openNativeManagement(connection: Connection, options: { config: Config; log: Logger; checkTopology: boolean }): Promise<NativeManagement> {
  const { config, log } = options;
  let opened: Promise<Amqp10Management | undefined>;
  if (options.checkTopology) {
    const management = await Amqp10Management.open(connection);
    await checkNativeTopology((name) => management.getQueue(name), config, log);
    opened = Promise.resolve(management);
  } else {
    opened = Amqp10Management.open(connection).catch(() => undefined);
  }
  return {
    api: () => opened,
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
