/**
 * The start-of-invocation check that the queues and exchanges the current config routes copies to
 * exist. Without it, a config changed after `topology apply` (another `BACKOFF_*` names other tier
 * queues) sends every retry copy back unroutable: the original is requeued, the invocation stops with
 * `publish-failed`, and the next one does the same, forever and quietly.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { TopologyDriftError } from '../core/invocation-errors.js';
import { delayPathMarker, type Destination, destinations } from '../topology/plan.js';
import type { TopologyOptions } from '../topology/types.js';

/** What every drift message ends with: the one command that mends it. */
const DRIFT_REMEDY = 'run topology apply with the current config';

/**
 * How many channels share the checks. One channel answers one check at a time, so each channel adds
 * the cost of opening it and saves round trips: on localhost (0.1-0.2 ms a round trip) one to four
 * channels cost the same, and a channel per destination twice as much (measured, 15 destinations);
 * at Amazon MQ's round trips (about 1 ms) three channels take a third of the time of one.
 */
const CHECK_CHANNELS = 3;

/**
 * Checks, creating nothing, that everything `options` routes to exists. When the broker has the
 * config's delay-path marker (plan.ts: `topology apply` declares it last, once all else matched),
 * that one name answers for all; else each destination is checked, spread over a few channels. A 404
 * closes the channel it happens on; then each destination is checked on a channel of its own, so that
 * the error names everything that is missing, not just the first, and a marker that vouched for a
 * missing one is deleted (best effort: it needs the configure permission), so that the next cold
 * start, here or in another container, checks each destination. It runs once per container before the
 * first message is taken. The connection is never at risk. Throws `TopologyDriftError` naming what is
 * missing.
 * @param trustMarker false after a copy came back unroutable although the check had passed: the
 *   marker is not taken at its word
 * @example
 * await checkDelayPath(broker.connection, topologyOptionsFromConfig(config));
 */
async function checkDelayPath(connection: ChannelModel, options: TopologyOptions, trustMarker = true): Promise<void> {
  const marker = delayPathMarker(options);
  if (trustMarker && marker !== undefined && (await openChannel(connection, (channel) => allExist(channel, [`exchange ${marker}`])))) return;
  const all = destinations(options);
  const groups = Array.from({ length: Math.min(CHECK_CHANNELS, all.length) }, (_, g) => all.filter((_, i) => i % CHECK_CHANNELS === g));
  const passed = await Promise.all(groups.map((group) => openChannel(connection, (channel) => allExist(channel, group))));
  if (passed.every(Boolean)) return;
  const found = await Promise.all(all.map((destination) => openChannel(connection, (channel) => allExist(channel, [destination]))));
  const missing = all.filter((_, i) => !found[i]);
  // Created between the two looks (topology apply ran meanwhile): nothing is missing any more.
  if (missing.length === 0) return;
  await forgetDelayPathMarker(connection, options);
  throw new TopologyDriftError(`Missing on the broker for the current config: ${missing.join(', ')}. No message was taken: ${DRIFT_REMEDY}`, { missing });
}

/**
 * Deletes the config's delay-path marker, if it has one, when a destination it vouched for is found
 * missing: best effort (the function's user needs the configure permission; a refusal is ignored, and
 * the container then checks each destination anyway).
 */
async function forgetDelayPathMarker(connection: ChannelModel, options: TopologyOptions): Promise<void> {
  const marker = delayPathMarker(options);
  if (marker !== undefined) await openChannel(connection, (channel) => channel.deleteExchange(marker)).catch(() => undefined);
}

/**
 * Runs `use` on a channel of its own, closed afterwards without waiting for the broker's answer
 * (nothing follows on it; a channel a 404 closed is already gone).
 */
async function openChannel<T>(connection: ChannelModel, use: (channel: Channel) => Promise<T>): Promise<T> {
  const channel = await connection.createChannel();
  // A 404 closes the channel and rejects the call that met it: the event is not news.
  channel.on('error', () => undefined);
  try {
    return await use(channel);
  } finally {
    void channel.close().catch(() => undefined);
  }
}

/** True when every destination exists; false at the first 404; any other failure is thrown. */
async function allExist(channel: Channel, group: readonly Destination[]): Promise<boolean> {
  const results = await Promise.allSettled(group.map((destination) => check(channel, destination)));
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failures.length === 0) return true;
  // The checks queued behind a 404 fail only because it closed the channel.
  if (failures.some((e) => (e as { code?: unknown }).code === 404)) return false;
  throw failures[0];
}

function check(channel: Channel, destination: Destination): Promise<unknown> {
  const name = destination.slice(destination.indexOf(' ') + 1);
  return destination.startsWith('queue') ? channel.checkQueue(name) : channel.checkExchange(name);
}

export { checkDelayPath, destinations, DRIFT_REMEDY, forgetDelayPathMarker };
