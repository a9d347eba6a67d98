import { describe, expect, it } from 'vitest';
import { nativeWorkQueueCheck, policyDefinition } from '../../shared/topology/native-check.js';
import { workQueueSpec } from '../../shared/topology/plan.js';
import { policyCommand } from '../../shared/topology/policy-fix.js';
import { listArgs, policyFromListing } from '../../shared/topology/rabbitmqctl-policies.js';
import type { ArgumentTable, QueuePolicy } from '../../shared/topology/types.js';
import { topologyOptions } from '../helpers/topology.js';

const spec = workQueueSpec(topologyOptions({ delayMode: 'native', maxDelayMs: 60_000, native: { maxRetries: 5, crashLoopLimit: 10, minDelayMs: 900 } }));
const planned: ArgumentTable = spec.arguments;
const bare: ArgumentTable = { 'x-queue-type': 'quorum' };
const noPolicy: QueuePolicy = { name: '', definition: {} };
const boomerangPolicy: QueuePolicy = { name: 'boomerang-native-orders', definition: policyDefinition(spec) };

describe('nativeWorkQueueCheck', () => {
  it('finds a queue declared as planned in order, from its arguments alone', () => {
    // Act
    const check = nativeWorkQueueCheck(spec, planned, undefined);
    // Assess
    expect(check.differences).toEqual([]);
    expect(check.warning).toBeUndefined();
    expect(check.detail).toMatch(/^native settings in order \(from its arguments; its policy was not read/);
  });

  it('names every missing setting of a plain quorum queue, and says to declare it again: the pull function reads its arguments, not a policy', () => {
    // Act
    const check = nativeWorkQueueCheck(spec, bare, noPolicy);
    // Assess
    expect(check.differences.map((d) => [d.argument, d.expected, d.actual])).toEqual([
      ['x-delayed-retry-type', 'failed', undefined],
      ['x-delayed-retry-min', '900', undefined],
      ['x-delayed-retry-max', '60000', undefined],
      ['x-dead-letter-exchange', '', undefined],
      ['x-dead-letter-routing-key', 'orders.parking', undefined],
      ['x-dead-letter-strategy', 'at-least-once', undefined],
      ['x-overflow', 'reject-publish', undefined],
      ['x-delivery-limit', '116', undefined],
    ]);
    expect(check.warning?.fix).toBeUndefined();
    expect(check.warning?.message).toContain("The pull function needs them among the queue's own arguments");
    expect(check.warning?.message).toContain('delete it and run `boomerang topology apply`');
  });

  it('offers the policy that lowers the pacing and the limit of a queue with every native argument', () => {
    // Act
    const check = nativeWorkQueueCheck(spec, { ...planned, 'x-delayed-retry-min': 2000, 'x-delivery-limit': 500 }, noPolicy);
    // Assess
    const fix = check.warning?.fix;
    expect(fix).toEqual({ name: 'boomerang-native-orders', pattern: '^orders$', definition: policyDefinition(spec) });
    expect(fix && policyCommand(fix)).toBe(
      `rabbitmqctl set_policy boomerang-native-orders '^orders$' '{"delayed-retry-type":"failed","delayed-retry-min":900,"delayed-retry-max":60000,` +
        `"dead-letter-exchange":"","dead-letter-routing-key":"orders.parking","dead-letter-strategy":"at-least-once","overflow":"reject-publish","delivery-limit":116}' --apply-to queues`,
    );
  });

  it('finds a plain quorum queue with the Boomerang policy in order', () => {
    // Act
    const check = nativeWorkQueueCheck(spec, bare, boomerangPolicy);
    // Assess
    expect(check.differences).toEqual([]);
    expect(check.detail).toBe('native settings in order (from its arguments and policy boomerang-native-orders)');
  });

  it.each<[string, ArgumentTable, Record<string, unknown>, [string, string | undefined][]]>([
    [
      "a policy's delayed-retry-type wins over the argument",
      { ...planned, 'x-delayed-retry-type': 'failed' },
      { 'delayed-retry-type': 'disabled' },
      [['x-delayed-retry-type', 'disabled']],
    ],
    ['the lower delayed-retry-min wins (the policy)', planned, { 'delayed-retry-min': 200 }, [['x-delayed-retry-min', '200']]],
    [
      'the lower delayed-retry-max wins (the argument)',
      { ...planned, 'x-delayed-retry-max': 1000 },
      { 'delayed-retry-max': 60_000 },
      [['x-delayed-retry-max', '1000']],
    ],
    ['the lower delivery limit wins', planned, { 'delivery-limit': 20 }, [['x-delivery-limit', '20']]],
    ['a positive delivery limit wins over -1', { ...planned, 'x-delivery-limit': -1 }, { 'delivery-limit': 116 }, []],
    [
      "the argument's dead-letter routing key wins over the policy's",
      { ...planned, 'x-dead-letter-routing-key': 'elsewhere' },
      { 'dead-letter-routing-key': 'orders.parking' },
      [['x-dead-letter-routing-key', 'elsewhere']],
    ],
    ['a policy cannot make a classic queue quorum', { ...planned, 'x-queue-type': 'classic' }, { 'queue-type': 'quorum' }, [['x-queue-type', 'classic']]],
  ])('%s', (_name, current, definition, expected) => {
    // Act
    const check = nativeWorkQueueCheck(spec, current, { name: 'team', definition });
    // Assess
    expect(check.differences.map((d) => [d.argument, d.actual])).toEqual(expected);
  });

  it.each<[string, ArgumentTable, boolean]>([
    ['no native argument at all', bare, false],
    ['a lower min argument, which a policy cannot raise', { ...bare, 'x-delayed-retry-min': 100 }, false],
    ['another dead-letter routing key argument, which wins over a policy', { ...bare, 'x-dead-letter-routing-key': 'elsewhere' }, false],
    ['a classic queue', { 'x-queue-type': 'classic' }, false],
    ['a higher delivery limit argument, the others missing', { ...bare, 'x-delivery-limit': 500 }, false],
    ['a higher delivery limit argument, the others in place: a policy can lower it', { ...planned, 'x-delivery-limit': 500 }, true],
  ])('offers the policy only when it would mend the queue: %s → %s', (_name, current, fixable) => {
    // Act
    const check = nativeWorkQueueCheck(spec, current, noPolicy);
    // Assess
    expect(check.warning?.fix !== undefined).toBe(fixable);
    expect(check.warning?.message).toContain(fixable ? 'This policy supplies them' : 'delete it and run `boomerang topology apply`');
  });

  it('reports what it could read when the arguments could not all be read', () => {
    // Prepare
    const readDifferences = [{ kind: 'queue' as const, name: 'orders', argument: 'durable', expected: 'true', actual: 'false' }];
    // Act
    const check = nativeWorkQueueCheck(spec, undefined, noPolicy, { incomplete: 'cannot read past durable = false', readDifferences });
    // Assess
    expect(check.differences).toEqual(readDifferences);
    expect(check.detail).toContain('cannot read past durable = false');
  });
});

describe('policyFromListing', () => {
  const listing = [
    'Listing queues ...',
    '[',
    '{"name":"orders","policy":"boomerang-native-orders","effective_policy_definition":{"delivery-limit":116}}',
    ',{"name":"orders.parking","policy":"","effective_policy_definition":[]}',
    ']',
  ].join('\n');

  it.each([
    ['orders', { name: 'boomerang-native-orders', definition: { 'delivery-limit': 116 } }],
    ['orders.parking', { name: '', definition: {} }],
    ['other', undefined],
  ])('reads the effective policy of %s', (queue, expected) => {
    // Act & Assess
    expect(policyFromListing(listing, queue)).toEqual(expected);
  });

  it('throws on output without a JSON list', () => {
    // Act & Assess
    expect(() => policyFromListing('Error: unknown node', 'orders')).toThrowError(/no JSON list/);
  });

  it('lists the vhost given', () => {
    // Act & Assess
    expect(listArgs('/shop')).toEqual(['list_queues', '--quiet', '--vhost', '/shop', '--formatter', 'json', 'name', 'policy', 'effective_policy_definition']);
  });
});
