import { connectFromConfig } from '../amqp/connect-from-config.js';
import type { Config } from '../config/config.js';
import { redactUrl } from '../observability/redact.js';
import type { CommandContext } from '../parked/context.js';
import type { Progress } from '../parked/progress.js';
import { withParkingLot } from '../parked/session.js';
import type { WalkCounts } from '../parked/walk.js';

/** What the console needs of the broker; tests pass a fake, the CLI {@link configBroker}. */
interface ConsoleBroker {
  /** The broker as the operator may see it: never the password. */
  readonly endpoint: string;
  /** Runs one parking-lot command on `queue` (a walk), reporting its counts as it goes. */
  walk<T>(queue: string, command: (ctx: CommandContext) => Promise<T>, onCounts?: (counts: Readonly<WalkCounts>) => void): Promise<T>;
  /**
   * Opens one connection and closes it: throws the `BrokerConnectionError` `invoke` gives (a refused
   * login at once), so a misconfigured console exits instead of serving a page that only shows errors.
   */
  check(): Promise<void>;
  /** Messages ready in each queue; null for a queue that does not exist. */
  depths(queues: readonly string[]): Promise<ReadonlyMap<string, number | null>>;
}

/** A walk's progress as counts for the console's jobs, instead of the CLI's terminal bar. */
function countsProgress(onCounts: (counts: Readonly<WalkCounts>) => void): Progress {
  return { update: onCounts, print: () => undefined, stop: onCounts };
}

/**
 * The broker of AMQP_URL or AMQP_SECRET_ID: each walk runs in the parked CLI's session (its own
 * connection and confirm channel, closed after), so the console and the CLI share one engine.
 */
function configBroker(config: Config): ConsoleBroker {
  return {
    endpoint: config.amqpSecret === undefined ? config.amqpUrls.map(redactUrl).join(', ') : `the broker in secret ${config.amqpSecret.secretId}`,
    walk: (queue, command, onCounts = () => undefined) => withParkingLot(config, queue, (ctx) => command({ ...ctx, progress: () => countsProgress(onCounts) })),
    async check() {
      await (await connectFromConfig(config, { connectionName: 'boomerang-console' })).close();
    },
    async depths(queues) {
      const broker = await connectFromConfig(config, { connectionName: 'boomerang-console' });
      try {
        const out = new Map<string, number | null>();
        for (const queue of queues) {
          // A missing queue closes its channel with 404: one channel per check.
          const channel = await broker.connection.createChannel();
          channel.on('error', () => undefined);
          out.set(queue, await channel.checkQueue(queue).then((ok) => ok.messageCount, () => null));
          await channel.close().catch(() => undefined);
        }
        return out;
      } finally {
        await broker.close();
      }
    },
  };
}

export { configBroker };
export type { ConsoleBroker };
