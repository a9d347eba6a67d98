import { describe, expect, it } from 'vitest';
import { mergeDefinitions } from '../../shared/cli/merge-definitions.js';
import type { RabbitDefinitions } from '../../shared/topology/definitions.js';

const common = { vhost: '/', durable: true, auto_delete: false } as const;

function definitions(queue: string, levelTtl: number): RabbitDefinitions {
  return {
    exchanges: [{ name: 'boomerang.delay.level', ...common, type: 'headers', internal: false, arguments: {} }],
    queues: [
      { name: queue, ...common, arguments: {} },
      { name: 'boomerang.delay.level.1', ...common, arguments: { 'x-message-ttl': levelTtl } },
    ],
    bindings: [
      { source: 'boomerang.delay.level', vhost: '/', destination: 'boomerang.delay.level.1', destination_type: 'queue', routing_key: '', arguments: {} },
    ],
  };
}

describe('mergeDefinitions', () => {
  it('keeps what two queues share once', () => {
    // Act
    const merged = mergeDefinitions([definitions('a', 1000), definitions('b', 1000)]);
    // Assess
    expect(merged.queues.map((q) => q.name)).toEqual(['a', 'boomerang.delay.level.1', 'b']);
    expect(merged.exchanges).toHaveLength(1);
    expect(merged.bindings).toHaveLength(1);
  });

  it('refuses one name with two sets of arguments, which an import would reduce to one', () => {
    expect(() => mergeDefinitions([definitions('a', 1000), definitions('b', 2000)])).toThrow(
      'Two queues need the queue //boomerang.delay.level.1 with different arguments',
    );
  });
});
