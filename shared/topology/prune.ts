/**
 * `boomerang topology prune`: removes the delay queues and delay-path markers of one work queue that its
 * plan no longer needs (fewer tiers, a lower `maxDelayMs`, a changed marker after any change), when they
 * are empty. Apply and the deploy's topology resource never delete; this does, on request only.
 *
 * Which names are candidates (AMQP cannot list queues): the names given (the deploy's report lists
 * them), or every name of the vhost that `rabbitmqctl` lists. Only the work queue's own delay-path names
 * qualify: its tier queues `<work>.delay.<n>ms` and its markers `<work>.delay-path.<16 hex>`. The shared
 * levels of exact mode serve every work queue of the vhost with the same resolution and level count, so
 * prune leaves them alone and says so; anything else is not the queue's to delete.
 *
 * Deleting: a marker exchange with `ifUnused` (nothing is bound to one). A classic queue with `ifEmpty`,
 * which the broker checks atomically. A quorum queue refuses `ifEmpty` (RabbitMQ 3.10 and 4.3 close the
 * connection with NOT_IMPLEMENTED), so it is checked passively and deleted only when that check found no
 * message: once every function runs the new plan nothing publishes to a queue it no longer routes to.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { planSummary } from './plan-summary.js';
import { buildTopologyPlan } from './plan.js';
import type { TopologyOptions } from './types.js';

/** A name's fate, before touching the broker. */
type Candidate = { readonly name: string; readonly kind: 'queue' | 'exchange' } | { readonly name: string; readonly kind: 'left'; readonly why: string };

/** What prune did (or, in a dry run, would do) with one name. */
type PruneItem = { readonly name: string; readonly kind: 'queue' | 'exchange' | 'left'; readonly outcome: string; readonly deleted: boolean };

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Sorts `names` into the work queue's delay-path entities that its current plan no longer needs, and
 * names to leave alone with the reason. Pure.
 * @example pruneCandidates(options, ['orders.delay.30000ms', 'orders']) // [{ name: 'orders.delay.30000ms', kind: 'queue' }, { name: 'orders', kind: 'left', why: ... }]
 */
function pruneCandidates(options: TopologyOptions, names: readonly string[]): Candidate[] {
  const needed = new Set(planSummary(buildTopologyPlan(options)).entities.map((e) => e.slice(e.indexOf(' ') + 1)));
  const work = escaped(options.workQueue);
  const tier = new RegExp(`^${work}\\.delay\\.\\d+ms$`);
  const marker = new RegExp(`^${work}\\.delay-path\\.[0-9a-f]{16}$`);
  const exactPrefix = `${options.exactNamePrefix ?? 'boomerang.delay'}.`;
  return [...new Set(names)].map((name): Candidate => {
    if (needed.has(name)) return { name, kind: 'left', why: 'the current plan needs it' };
    if (tier.test(name)) return { name, kind: 'queue' };
    if (marker.test(name)) return { name, kind: 'exchange' };
    if (name.startsWith(exactPrefix))
      return { name, kind: 'left', why: 'a shared level of exact mode: other work queues of the vhost may use it; delete it by hand once none does' };
    return { name, kind: 'left', why: `not part of the delay path of ${options.workQueue}` };
  });
}

/** Runs `op` on a channel of its own (a 404 or 406 closes the channel it happens on); resolves with the broker's error, if any. */
async function onChannel(connection: ChannelModel, op: (ch: Channel) => Promise<unknown>): Promise<Error | undefined> {
  const ch = await connection.createChannel();
  ch.on('error', () => undefined);
  try {
    await op(ch);
    return undefined;
  } catch (error) {
    return error as Error;
  } finally {
    await ch.close().catch(() => undefined);
  }
}

async function pruneQueue(
  connection: ChannelModel,
  name: string,
  queueType: TopologyOptions['queueType'],
  yes: boolean,
): Promise<Omit<PruneItem, 'name' | 'kind'>> {
  let messages = 0;
  let consumers = 0;
  const missing = await onChannel(connection, async (ch) => ({ messageCount: messages, consumerCount: consumers } = await ch.checkQueue(name)));
  if (missing !== undefined) return { outcome: 'not on the broker', deleted: false };
  if (messages > 0 || consumers > 0)
    return { outcome: `kept: it holds ${messages} message(s) and has ${consumers} consumer(s); run prune again once it is empty`, deleted: false };
  if (!yes) return { outcome: 'empty: would be deleted (add --yes)', deleted: false };
  const refused = await onChannel(connection, (ch) => ch.deleteQueue(name, queueType === 'classic' ? { ifEmpty: true } : {}));
  return refused === undefined ? { outcome: 'deleted (it was empty)', deleted: true } : { outcome: `kept: ${refused.message}`, deleted: false };
}

async function pruneExchange(connection: ChannelModel, name: string, yes: boolean): Promise<Omit<PruneItem, 'name' | 'kind'>> {
  if ((await onChannel(connection, (ch) => ch.checkExchange(name))) !== undefined) return { outcome: 'not on the broker', deleted: false };
  if (!yes) return { outcome: 'a marker (holds no message): would be deleted (add --yes)', deleted: false };
  const refused = await onChannel(connection, (ch) => ch.deleteExchange(name, { ifUnused: true }));
  return refused === undefined ? { outcome: 'deleted (a marker, unused)', deleted: true } : { outcome: `kept: ${refused.message}`, deleted: false };
}

/**
 * Looks at each candidate and, with `yes`, deletes the empty ones; a dry run deletes nothing.
 * `queueType` is the work queue's current one: a classic queue is deleted with `ifEmpty`.
 * @example const items = await pruneTopology(connection, pruneCandidates(options, names), { yes: false, queueType: 'quorum' });
 */
async function pruneTopology(
  connection: ChannelModel,
  candidates: readonly Candidate[],
  options: { readonly yes: boolean; readonly queueType: TopologyOptions['queueType'] },
): Promise<PruneItem[]> {
  const items: PruneItem[] = [];
  for (const candidate of candidates) {
    const { name, kind } = candidate;
    if (candidate.kind === 'left') items.push({ name, kind, outcome: `left alone: ${candidate.why}`, deleted: false });
    else if (candidate.kind === 'queue') items.push({ name, kind, ...(await pruneQueue(connection, name, options.queueType, options.yes)) });
    else items.push({ name, kind, ...(await pruneExchange(connection, name, options.yes)) });
  }
  return items;
}

export { pruneCandidates, pruneTopology };
