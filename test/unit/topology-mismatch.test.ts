import { describe, expect, it } from 'vitest';
import { TopologyMismatchError } from '../../shared/topology/mismatch.js';
import { describeDifferences, parseInequivalentArg, topologyMismatchError } from '../../shared/topology/mismatch.js';

/** amqplib's wrapper around the broker's text, as thrown by `assertQueue`. */
const wrapped = (text: string, method = 'QueueDeclare'): string =>
  `Operation failed: ${method}; 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - ${text}"`;

describe('parseInequivalentArg', () => {
  it.each([
    // RabbitMQ 3.10.8, both values set
    [
      wrapped("inequivalent arg 'x-message-ttl' for queue 'a.delay.1000ms' in vhost '/': received '2000' but current is '1000'"),
      { kind: 'queue', name: 'a.delay.1000ms', argument: 'x-message-ttl', expected: '2000', actual: '1000' },
    ],
    // 3.10.8, the plan does not set the argument
    [
      wrapped("inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/': received none but current is the value '1000' of type 'short'"),
      { kind: 'queue', name: 'q', argument: 'x-message-ttl', expected: undefined, actual: '1000', actualType: 'short' },
    ],
    // 3.10.8, the queue does not set it
    [
      wrapped("inequivalent arg 'x-dead-letter-routing-key' for queue 'q' in vhost 'prod': received the value 'zz' of type 'longstr' but current is none"),
      { kind: 'queue', name: 'q', argument: 'x-dead-letter-routing-key', expected: 'zz', actual: undefined },
    ],
    // other versions' wording
    [
      "PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'a.delay.1000ms' in vhost '/': received the value '2000' of type 'signedint' but current value is '1000' of type 'long'",
      { kind: 'queue', name: 'a.delay.1000ms', argument: 'x-message-ttl', expected: '2000', actual: '1000', actualType: 'long' },
    ],
    // an empty dead-letter exchange is a value, not "none"
    [
      wrapped("inequivalent arg 'x-dead-letter-exchange' for queue 'q' in vhost '/': received 'foo' but current is ''"),
      { kind: 'queue', name: 'q', argument: 'x-dead-letter-exchange', expected: 'foo', actual: '' },
    ],
    [
      wrapped("inequivalent arg 'alternate-exchange' for exchange 'x.deliver' in vhost '/': received 'ae2' but current is 'ae1'", 'ExchangeDeclare'),
      { kind: 'exchange', name: 'x.deliver', argument: 'alternate-exchange', expected: 'ae2', actual: 'ae1' },
    ],
    [
      wrapped("inequivalent arg 'type' for exchange 'x' in vhost '/': received 'fanout' but current is 'topic'", 'ExchangeDeclare'),
      { kind: 'exchange', name: 'x', argument: 'type', expected: 'fanout', actual: 'topic' },
    ],
  ])('reads %s', (message, difference) => {
    expect(parseInequivalentArg(message)).toEqual(difference);
  });

  it('returns undefined for any other 406', () => {
    expect(parseInequivalentArg(wrapped("invalid arg 'x-overflow' for queue 'q' in vhost '/'"))).toBeUndefined();
  });
});

describe('describeDifferences of one difference', () => {
  it('names the queue, the argument, both values and what to do', () => {
    // Act
    const text = describeDifferences([{ kind: 'queue', name: 'a.delay.1000ms', argument: 'x-message-ttl', expected: '2000', actual: '1000' }]);
    // Assess
    expect(text).toBe(
      "queue 'a.delay.1000ms' has x-message-ttl = '1000' but the topology expects '2000'. " +
        'Apply cannot change the arguments of an existing queue. Move its messages elsewhere first (e.g. with a shovel), ' +
        'since deleting the queue loses them, then delete it and run apply again; or change the configuration back.',
    );
  });

  it('says "(not set)" for a missing value and tells to delete an exchange', () => {
    // Act
    const text = describeDifferences([{ kind: 'exchange', name: 'd', argument: 'alternate-exchange', expected: 'u', actual: undefined }]);
    // Assess
    expect(text).toMatch(/^exchange 'd' has alternate-exchange = \(not set\) but the topology expects 'u'\. Delete the exchange/);
  });
});

describe('describeDifferences', () => {
  const ttl = { kind: 'queue', name: 'q', argument: 'x-message-ttl', expected: '2000', actual: '1000' } as const;
  const key = { kind: 'queue', name: 'q', argument: 'x-dead-letter-routing-key', expected: 'orders', actual: undefined } as const;

  it.each([
    [undefined, 'Move its messages elsewhere first'],
    [0, "It is empty: delete it (rabbitmqctl delete_queue 'q') and run apply again"],
    [1, 'Move its 1 message elsewhere first (e.g. with a shovel), since deleting the queue loses them'],
    [42, 'Move its 42 messages elsewhere first'],
  ])('names every differing argument, and with %s messages says what deleting costs', (messageCount, remedy) => {
    // Act
    const text = describeDifferences([ttl, key], messageCount);
    // Assess
    expect(text).toContain(
      "queue 'q' has x-message-ttl = '1000' but the topology expects '2000'; x-dead-letter-routing-key = (not set) but the topology expects 'orders'.",
    );
    expect(text).toContain(remedy);
    expect(text).not.toContain('boomerang topology apply');
  });
});

describe('topologyMismatchError', () => {
  it('groups the differences of one entity in one paragraph', () => {
    // Act
    const error = topologyMismatchError(
      [
        { kind: 'queue', name: 'q', argument: 'x-message-ttl', expected: '2000', actual: '1000' },
        { kind: 'queue', name: 'q', argument: 'x-overflow', expected: 'reject-publish', actual: undefined },
      ],
      new Map([['q', 3]]),
    );
    // Assess
    expect(error.message).toMatch(
      /^queue 'q' has x-message-ttl = '1000' .*; x-overflow = \(not set\) but the topology expects 'reject-publish'\. .*its 3 messages/,
    );
    expect(error.warnings).toEqual([]);
  });

  it('lists every difference and takes kind, entity and argument from the first', () => {
    // Act
    const error = topologyMismatchError([
      { kind: 'exchange', name: 'd', argument: 'alternate-exchange', expected: 'u', actual: undefined },
      { kind: 'queue', name: 'q', argument: 'x-message-ttl', expected: '2000', actual: '1000' },
    ]);
    // Assess
    expect(error).toBeInstanceOf(TopologyMismatchError);
    expect(error).toMatchObject({ name: 'TopologyMismatchError', kind: 'exchange', entity: 'd', argument: 'alternate-exchange' });
    expect(error.message.split('\n')).toEqual([
      'The broker differs from the topology in 2 places:',
      expect.stringMatching(/^- exchange 'd' has alternate-exchange/),
      expect.stringMatching(/^- queue 'q' has x-message-ttl = '1000'/),
    ]);
  });
});
