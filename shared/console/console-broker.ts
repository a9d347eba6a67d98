import { vhostOfUrl } from '../amqp/broker-endpoints.js';
import { brokerUrlsFromConfig } from '../amqp/broker-urls-from-config.js';
import { connectFromConfig } from '../amqp/connect-from-config.js';
import type { Config } from '../config/config.js';
import { redactUrl } from '../observability/redact.js';
import type { Progress } from '../parked/progress.js';
import { withParkingLot } from '../parked/session.js';
import type { WalkCounts } from '../parked/walk.js';
import { type ConsoleCommand, type ConsoleResult, runConsoleCommand } from './console-command.js';
import type { ConsoleQueue } from './console-queue.js';
import { managementApiOf, type NativeCounts, readNativeCounts } from './native-counts.js';

/** The lot a walk runs on: its parking lot, and the work queue a replay goes to when the message names none. */
type ConsoleLot = Pick<ConsoleQueue, 'parkingQueue' | 'workQueue'>;

/** What the console needs of the broker; tests pass a fake, the CLI {@link configBroker}. */
interface ConsoleBroker {
  /** The broker as the operator may see it: never the password. */
  readonly endpoint: string;
  /** Runs one parking-lot command on `lot` (a walk), reporting its counts as it goes. */
  walk<C extends ConsoleCommand>(lot: ConsoleLot, command: C, onCounts?: (counts: Readonly<WalkCounts>) => void): Promise<ConsoleResult<C>>;
  /**
   * Opens one connection and closes it: throws the `BrokerConnectionError` `invoke` gives (a refused
   * login at once), so a misconfigured console exits instead of serving a page that only shows errors.
   */
  check(): Promise<void>;
  /** Messages ready in each queue; null for a queue that does not exist. */
  depths(queues: readonly string[]): Promise<ReadonlyMap<string, number | null>>;
  /**
   * The messages of each native work queue of `queues` apart (ready, waiting for their delay, unacked),
   * which `depths` cannot tell: from the broker's management API, or why not for each.
   */
  nativeCounts(queues: readonly string[]): Promise<ReadonlyMap<string, NativeCounts>>;
}

const COUNTS = ['total', 'visited', 'kept', 'moved', 'deleted', 'notMoved'] as const;

/** The walk counts of a walk's result or report, and nothing else: what a job shows, the same from either broker. */
function countsOf(result: Readonly<Record<string, unknown>>): WalkCounts {
  return Object.fromEntries(COUNTS.map((name) => [name, Number(result[name] ?? 0)])) as WalkCounts;
}

/** A walk's progress as counts for the console's jobs, instead of the CLI's terminal bar. */
function countsProgress(onCounts: (counts: Readonly<WalkCounts>) => void): Progress {
  const report = (counts: Readonly<WalkCounts>): void => onCounts(countsOf(counts));
  return { update: report, print: () => undefined, stop: report };
}

/**
 * The broker of AMQP_URL or AMQP_SECRET_ID: each walk runs in the parked CLI's session (its own
 * connection and confirm channel, closed after), so the console and the CLI share one engine.
 */
function configBroker(config: Config): ConsoleBroker {
  return {
    endpoint: config.amqpSecret === undefined ? config.amqpUrls.map(redactUrl).join(', ') : `the broker in secret ${config.amqpSecret.secretId}`,
    walk: (lot, command, onCounts = () => undefined) =>
      withParkingLot(config, lot.parkingQueue, (ctx) =>
        runConsoleCommand({ ...ctx, progress: () => countsProgress(onCounts) }, command, { workQueue: lot.workQueue, retryHeader: config.retryHeader }),
      ),
    check: () => checkBroker(config, 'boomerang-console'),
    depths: (queues) => queueDepths(config, queues, 'boomerang-console'),
    nativeCounts: (queues) => nativeQueueCounts(config, queues),
  };
}

/** Opens one connection to the broker of `config` and closes it: throws when it cannot. */
async function checkBroker(config: Config, connectionName: string): Promise<void> {
  await (await connectFromConfig(config, { connectionName })).close();
}

/** Messages ready in each of `queues` on the broker of `config`; null for a queue that does not exist. */
async function queueDepths(config: Config, queues: readonly string[], connectionName: string): Promise<Map<string, number | null>> {
  const broker = await connectFromConfig(config, { connectionName });
  try {
    const out = new Map<string, number | null>();
    for (const queue of queues) {
      // A missing queue closes its channel with 404: one channel per check.
      const channel = await broker.connection.createChannel();
      channel.on('error', () => undefined);
      out.set(
        queue,
        await channel.checkQueue(queue).then(
          (ok) => ok.messageCount,
          () => null,
        ),
      );
      await channel.close().catch(() => undefined);
    }
    return out;
  } finally {
    await broker.close();
  }
}

/**
 * The messages of each of `queues` apart, from the management API of the broker of `config`: its
 * `managementUrl`, else the one derived from its (first) broker URL, with that URL's login.
 */
async function nativeQueueCounts(config: Config, queues: readonly string[]): Promise<Map<string, NativeCounts>> {
  if (queues.length === 0) return new Map();
  // The secret's URL holds the vhost and the login, whichever shape the secret has.
  const [url] = await brokerUrlsFromConfig(config);
  if (url === undefined) return readNativeCounts(undefined, '/', queues);
  return readNativeCounts(managementApiOf(url, config.managementUrl), vhostOfUrl(url), queues);
}

export { checkBroker, configBroker, countsOf, nativeQueueCounts, queueDepths };
export type { ConsoleBroker };
