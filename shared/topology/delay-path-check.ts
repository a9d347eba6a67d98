/**
 * The start-of-invocation check that the queues and exchanges the current config routes copies to
 * exist. Without it, a config changed after `topology apply` (another `BACKOFF_*` names other tier
 * queues) sends every retry copy back unroutable: the original is requeued, the invocation stops with
 * `publish-failed`, and the next one does the same, forever and quietly.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { TopologyDriftError } from '../errors.js';
import { exactLevelCount } from './exact-names.js';
import { createDelayRouter } from './plan.js';
import type { TopologyOptions } from './types.js';

/** What every drift message ends with: the one command that mends it. */
const DRIFT_REMEDY = 'run topology apply with the current config';

/** An entity a copy or a consumer goes to, as `queue <name>` or `exchange <name>`. */
type Destination = `${'queue' | 'exchange'} ${string}`;

/**
 * Where this config sends anything: the work queue, the parking lot and, read from the delay router
 * itself (so it cannot disagree with the copies), the queue of every tier or the exchange of every
 * exact level. The router is the code the bundle already holds; the full plan would add 2 kB.
 */
function destinations(options: TopologyOptions): Destination[] {
  const out = new Set<Destination>([`queue ${options.workQueue}`, `queue ${options.parkingQueue}`]);
  const tiers = options.delayMode === 'tiers';
  // No tier: MAX_RETRIES=0 without retrying rules has no delay path (and the router would refuse).
  if (tiers && options.tierDelaysMs.length === 0) return [...out];
  const route = createDelayRouter(options);
  const delaysMs = tiers ? options.tierDelaysMs : levelDelaysMs(options);
  for (const delayMs of delaysMs) {
    const { exchange, routingKey } = route(delayMs);
    out.add(exchange === '' ? `queue ${routingKey}` : `exchange ${exchange}`);
  }
  return [...out];
}

/** One delay per exact level (1, 2, 4 ... units): each is routed first to its own level's exchange. */
function levelDelaysMs(options: TopologyOptions): number[] {
  return Array.from({ length: exactLevelCount(options) }, (_, level) => options.delayResolutionMs * 2 ** level);
}

/**
 * How many channels share the checks. One channel answers one check at a time, so each channel adds
 * the cost of opening it and saves round trips: on localhost (0.1-0.2 ms a round trip) one to four
 * channels cost the same, and a channel per destination twice as much (measured, 15 destinations);
 * at Amazon MQ's round trips (about 1 ms) three channels take a third of the time of one.
 */
const CHECK_CHANNELS = 3;

/**
 * Passively checks (creates nothing) each destination of `options`, spread over a few channels, one
 * of them `on` when given (the channel the consumer will use, before it starts). A 404 closes the
 * channel it happens on; only then is each destination checked again on a channel of its own, so
 * that the error names everything that is missing, not just the first. It runs once per container
 * before the first message is taken, so it is part of every cold start. The connection is never at
 * risk. Throws `TopologyDriftError` naming what is missing (`on` may be closed by then).
 * @example
 * await checkDelayPath(broker.connection, topologyOptionsFromConfig(config), channel);
 */
async function checkDelayPath(connection: ChannelModel, options: TopologyOptions, on?: Channel): Promise<void> {
  const all = destinations(options);
  const groups = Array.from({ length: Math.min(CHECK_CHANNELS, all.length) }, (_, g) => all.filter((_, i) => i % CHECK_CHANNELS === g));
  const passed = await Promise.all(groups.map((group, g) => (g === 0 && on !== undefined ? allExist(on, group, false) : connection.createChannel().then((channel) => allExist(channel, group, true)))));
  if (passed.every(Boolean)) return;
  const found = await Promise.all(all.map((destination) => exists(connection, destination)));
  const missing = all.filter((_, i) => !found[i]);
  // Created between the two looks (topology apply ran meanwhile): nothing is missing any more.
  if (missing.length === 0) return;
  throw new TopologyDriftError(
    `Missing on the broker for the current config: ${missing.join(', ')}. No message was taken: ${DRIFT_REMEDY}`,
    { missing },
  );
}

/**
 * True when every destination exists; false at the first 404; any other failure is thrown. A
 * channel of its own (`close`) is closed without waiting for the broker's answer: nothing follows on it.
 */
async function allExist(channel: Channel, group: readonly Destination[], close: boolean): Promise<boolean> {
  // A 404 closes the channel and rejects the check that met it: the event is not news.
  const ignore = (): void => undefined;
  channel.on('error', ignore);
  const results = await Promise.allSettled(group.map((destination) => check(channel, destination)));
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failures.length === 0) {
    if (close) void channel.close().catch(() => undefined);
    else channel.off('error', ignore);
    return true;
  }
  // The checks queued behind a 404 fail only because it closed the channel.
  if (failures.some((e) => (e as { code?: unknown }).code === 404)) return false;
  throw failures[0];
}

/** False when the broker answers 404; any other failure (the connection went) is thrown. */
async function exists(connection: ChannelModel, destination: Destination): Promise<boolean> {
  const channel = await connection.createChannel();
  // The 404 is already the rejection of the check; unhandled, the event would crash the process.
  channel.on('error', () => undefined);
  try {
    await check(channel, destination);
    await channel.close().catch(() => undefined);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 404) throw error;
    return false;
  }
}

function check(channel: Channel, destination: Destination): Promise<unknown> {
  const name = destination.slice(destination.indexOf(' ') + 1);
  return destination.startsWith('queue') ? channel.checkQueue(name) : channel.checkExchange(name);
}

export { checkDelayPath, destinations, DRIFT_REMEDY };
