import { ConfigError } from '../errors.js';
import type { RabbitDefinitions } from '../topology/definitions.js';

/**
 * One definitions file for several queues (pure). Entities that two queues share (exact mode's level
 * exchanges and queues) appear once; the same name with different arguments is refused, because an
 * import would keep only one of them.
 * @example mergeDefinitions([webhooksDefinitions, partnerSyncDefinitions])
 */
function mergeDefinitions(all: readonly RabbitDefinitions[]): RabbitDefinitions {
  const pick = <T extends object>(kind: string, items: readonly T[], key: (item: T) => string): T[] => {
    const byKey = new Map<string, T>();
    for (const item of items) {
      const seen = byKey.get(key(item));
      if (seen !== undefined && JSON.stringify(seen) !== JSON.stringify(item)) {
        throw new ConfigError(
          `Two queues need the ${kind} ${key(item)} with different arguments (${JSON.stringify(seen)} vs ${JSON.stringify(item)}): give them the same delay settings, or export them with --function one at a time`,
        );
      }
      byKey.set(key(item), item);
    }
    return [...byKey.values()];
  };
  return {
    exchanges: pick(
      'exchange',
      all.flatMap((d) => d.exchanges),
      (x) => `${x.vhost}/${x.name}`,
    ),
    queues: pick(
      'queue',
      all.flatMap((d) => d.queues),
      (q) => `${q.vhost}/${q.name}`,
    ),
    bindings: pick(
      'binding',
      all.flatMap((d) => d.bindings),
      (b) => JSON.stringify([b.vhost, b.source, b.destination, b.destination_type, b.routing_key]),
    ),
  };
}

export { mergeDefinitions };
