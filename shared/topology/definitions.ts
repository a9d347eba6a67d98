/**
 * The topology plan as RabbitMQ definitions: the JSON `rabbitmqctl import_definitions`, the management
 * API (`POST /api/definitions`) and the management UI ("Import definitions", also on Amazon MQ) read.
 * Pure, and built from the same `buildTopologyPlan` as `apply` and `verify`, so the three never disagree.
 * An import creates what is missing and leaves an existing queue as it is, even when its arguments
 * differ (checked on RabbitMQ 3.10): run `boomerang topology verify` after it.
 */
import { allExchanges } from './plan.js';
import type { TopologyPlan } from './types.js';

type Arguments = Readonly<Record<string, string | number>>;

type QueueDefinition = { readonly name: string; readonly vhost: string; readonly durable: true; readonly auto_delete: false; readonly arguments: Arguments };

type ExchangeDefinition = QueueDefinition & { readonly type: string; readonly internal: false };

type BindingDefinition = {
  readonly source: string;
  readonly vhost: string;
  readonly destination: string;
  readonly destination_type: 'queue' | 'exchange';
  readonly routing_key: string;
  readonly arguments: Arguments;
};

/** The parts of a definitions file Boomerang writes: no users, vhosts, permissions or policies. */
type RabbitDefinitions = {
  readonly exchanges: readonly ExchangeDefinition[];
  readonly queues: readonly QueueDefinition[];
  readonly bindings: readonly BindingDefinition[];
};

/**
 * The definitions of every exchange, queue and binding of `plan` in `vhost`: durable, never
 * auto-deleted, with the plan's arguments as they are (the work queue included: an import leaves an
 * existing one alone, which is what `apply` does too).
 * @example
 * const definitions = topologyDefinitions(buildTopologyPlan(topologyOptionsFromConfig(config)), '/');
 * writeFileSync('definitions.json', JSON.stringify(definitions, null, 2));
 */
function topologyDefinitions(plan: TopologyPlan, vhost: string): RabbitDefinitions {
  const common = { vhost, durable: true, auto_delete: false } as const;
  return {
    exchanges: allExchanges(plan).map((x) => ({ name: x.name, ...common, type: x.type, internal: false, arguments: { ...x.arguments } })),
    queues: plan.queues.map((q) => ({ name: q.name, ...common, arguments: { ...q.arguments } })),
    bindings: plan.bindings.map((b) => ({
      source: b.source,
      vhost,
      destination: b.destination,
      destination_type: b.destinationKind,
      routing_key: b.pattern,
      arguments: {},
    })),
  };
}

export { topologyDefinitions };
export type { RabbitDefinitions };
