import { describe, expect, it } from 'vitest';
import { type BrokerNode, type PrivateNode, resolveBrokerNode } from '../helpers/broker-ctl.js';

/** The test helper that picks the node rabbitmqctl must talk to for an AMQP_URL. */
const NODES: readonly PrivateNode[] = [
  { name: 'boomerang-r43', port: 5674, flavour: '4' },
  { name: 'boomerang-r40', port: 5675, flavour: '4.0' },
  { name: 'boomerang-f1', port: 5681, flavour: 'system' },
  { name: 'boomerang-r4-c1', port: 5791, flavour: '4' },
];

describe('resolveBrokerNode', () => {
  it.each<[string, BrokerNode]>([
    ['amqp://guest:guest@127.0.0.1:5672', { kind: 'system', flavour: 'system' }],
    ['amqp://guest:guest@localhost', { kind: 'system', flavour: 'system' }],
    ['amqp://guest:guest@127.0.0.1:5674', { kind: 'private', name: 'boomerang-r43', port: 5674, flavour: '4' }],
    ['amqp://guest:guest@127.0.0.1:5675', { kind: 'private', name: 'boomerang-r40', port: 5675, flavour: '4.0' }],
    ['amqp://guest:guest@localhost:5681/%2F', { kind: 'private', name: 'boomerang-f1', port: 5681, flavour: 'system' }],
    // A cluster's list of endpoints is named by its first.
    ['amqp://guest:guest@127.0.0.1:5791,amqp://guest:guest@127.0.0.1:5792', { kind: 'private', name: 'boomerang-r4-c1', port: 5791, flavour: '4' }],
  ])('finds the node that serves %s', (url, expected) => {
    // Act
    const node = resolveBrokerNode(url, NODES);
    // Assess
    expect(node).toEqual(expected);
  });

  it.each([
    ['amqp://guest:s3cret@127.0.0.1:5999', /AMQP_URL=amqp:\/\/guest:\*\*\*@127\.0\.0\.1:5999: no node this project runs uses port 5999/],
    ['amqp://app:s3cret@mq.example.com:5671', /AMQP_URL=amqp:\/\/app:\*\*\*@mq\.example\.com:5671: rabbitmqctl reaches only nodes on this machine/],
    ['not a url', /AMQP_URL=not a url: it is not a URL/],
  ])('fails loudly, naming the URL but not its password, for %s', (url, message) => {
    // Act
    const resolving = (): BrokerNode => resolveBrokerNode(url, NODES);
    // Assess
    expect(resolving).toThrow(message);
    expect(resolving).not.toThrow(/s3cret/);
  });

  it('refuses to guess when two private nodes claim the same port', () => {
    // Prepare: a stale folder of a node of the other flavour on the same port
    const nodes = [...NODES, { name: 'boomerang-old', port: 5674, flavour: 'system' } as const];
    // Act
    const resolving = (): BrokerNode => resolveBrokerNode('amqp://guest:guest@127.0.0.1:5674', nodes);
    // Assess
    expect(resolving).toThrow(/boomerang-r43 \(flavour 4\), boomerang-old \(flavour system\) all use port 5674/);
  });
});
