/**
 * The AMQP operations `applyTopology` and `verifyTopology` share. A 404 or 406 closes the channel it
 * happens on, so operations run on a lent channel that is thrown away (and replaced on next use)
 * after any error; the connection itself is never at risk.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { BoomerangError } from '../errors.js';
import { parseInequivalentArg } from './mismatch.js';
import type { ArgumentDifference, BindingSpec, ExchangeSpec, QueueSpec } from './types.js';
import { markerExchanges } from './plan.js';

/** A planned exchange or queue, tagged with its kind. */
type PlannedEntity = { readonly kind: 'exchange'; readonly spec: ExchangeSpec } | { readonly kind: 'queue'; readonly spec: QueueSpec };

/** How an existing entity compares with the plan. */
type Comparison = { readonly equal: true } | { readonly equal: false; readonly difference: ArgumentDifference };

/** A channel error the caller chose to handle: the AMQP reply code and the error carrying the broker's text. */
type ChannelFailure = { readonly code: number; readonly error: Error };

/** Runs operations on one channel at a time; see `lendChannels`. */
type ChannelLender = {
  run(op: (channel: Channel) => Promise<unknown>, allow?: readonly number[]): Promise<ChannelFailure | undefined>;
  close(): Promise<void>;
};

const NOT_FOUND = 404;
const PRECONDITION_FAILED = 406;

/**
 * Lends channels from `connection`. `run` resolves `undefined` on success and a `ChannelFailure` on an
 * allowed channel error (404 by default); any other failure is rethrown.
 */
function lendChannels(connection: ChannelModel): ChannelLender {
  let current: Promise<Channel> | undefined;
  const open = async (): Promise<Channel> => {
    const channel = await connection.createChannel();
    // A channel error is already the rejection of the operation; unhandled, the event would crash the process.
    channel.on('error', () => undefined);
    return channel;
  };
  return {
    async run(op, allow = [NOT_FOUND]) {
      current ??= open();
      const channel = await current;
      try {
        await op(channel);
        return undefined;
      } catch (error) {
        current = undefined;
        await channel.close().catch(() => undefined);
        const code = (error as { code?: unknown }).code;
        if (typeof code === 'number' && allow.includes(code)) return { code, error: error as Error };
        throw error;
      }
    },
    async close() {
      const channel = await current?.catch(() => undefined);
      current = undefined;
      await channel?.close().catch(() => undefined);
    },
  };
}

/** A passive check: the queue's message count (0 for an exchange), or `undefined` when it is missing. Creates nothing. */
async function inspect(
  lender: ChannelLender,
  entity: { readonly kind: PlannedEntity['kind']; readonly spec: { readonly name: string } },
): Promise<number | undefined> {
  let messageCount = 0;
  const failure = await lender.run(async (ch) => {
    if (entity.kind === 'queue') messageCount = (await ch.checkQueue(entity.spec.name)).messageCount;
    else await ch.checkExchange(entity.spec.name);
  });
  return failure === undefined ? messageCount : undefined;
}

/**
 * Declares the entity durable with `args` (its planned ones by default): creates it when missing,
 * changes nothing when it exists, and turns a 406 "inequivalent arg" into the difference the broker
 * names (only the first; `readArguments` follows them all).
 */
async function declare(
  lender: ChannelLender,
  entity: PlannedEntity,
  args: Readonly<Record<string, string | number | boolean>> = entity.spec.arguments,
): Promise<Comparison> {
  const { name } = entity.spec;
  const failure = await lender.run(
    (ch) =>
      entity.kind === 'queue'
        ? ch.assertQueue(name, { durable: true, arguments: args })
        : ch.assertExchange(name, entity.spec.type, { durable: true, arguments: args }),
    [PRECONDITION_FAILED],
  );
  if (failure === undefined) return { equal: true };
  const difference = parseInequivalentArg(failure.error.message);
  if (difference) return { equal: false, difference };
  throw new BoomerangError(`Declaring ${entity.kind} '${name}' failed: ${failure.error.message}`, {
    cause: failure.error,
  });
}

/** Binds as planned; binding twice is a no-op on the broker. */
async function bind(lender: ChannelLender, binding: BindingSpec): Promise<void> {
  const { destination, source, pattern } = binding;
  const failure = await lender.run((ch) =>
    binding.destinationKind === 'queue' ? ch.bindQueue(destination, source, pattern) : ch.bindExchange(destination, source, pattern),
  );
  if (failure !== undefined) {
    throw new BoomerangError(`Binding ${describeBinding(binding)} failed: ${failure.error.message}`, {
      cause: failure.error,
    });
  }
}

/** How a binding is named in reports: `source -> destination [pattern]`. */
function describeBinding(binding: BindingSpec): string {
  return `${binding.source} -> ${binding.destination} [${binding.pattern}]`;
}

/** The RabbitMQ version the broker announced when the connection opened (`'4.3.6'`). */
function brokerVersionOf(connection: ChannelModel): string | undefined {
  return connection.connection.serverProperties.version;
}

/** The plan's exchanges then queues, tagged, in declaration order. */
function plannedEntities(plan: { exchanges: readonly ExchangeSpec[]; queues: readonly QueueSpec[] }): PlannedEntity[] {
  return [...plan.exchanges.map((spec) => ({ kind: 'exchange' as const, spec })), ...plan.queues.map((spec) => ({ kind: 'queue' as const, spec }))];
}

/** The plan's delay-path marker as an entity, if it has one (declared last by apply). */
function markerEntities(plan: { readonly marker?: string }): PlannedEntity[] {
  return markerExchanges(plan).map((spec) => ({ kind: 'exchange' as const, spec }));
}

export { bind, brokerVersionOf, declare, describeBinding, inspect, lendChannels, markerEntities, plannedEntities };
export type { ChannelLender, PlannedEntity };
