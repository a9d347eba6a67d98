import type { ConfirmChannel } from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfirmPublisher } from '../../shared/amqp/confirm-publisher.js';
import { PublishError } from '../../shared/errors.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { uniqueName } from '../helpers/broker.js';
import { useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

describe('ConfirmPublisher on the broker', () => {
  let channel: ConfirmChannel;
  let queue: string;

  beforeEach(async () => {
    const broker = testBroker();
    queue = uniqueName('confirm');
    broker.trackQueue(queue);
    await broker.channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    channel = await broker.connection.createConfirmChannel();
  });

  afterEach(async () => {
    await channel.close().catch(() => undefined);
  });

  it('resolves each of many publishes in flight at once on its own confirm, and stamps a copy id unique per copy', async () => {
    // Prepare
    const publisher = new ConfirmPublisher(channel, 10_000);
    // Act
    const results = await Promise.allSettled(Array.from({ length: 500 }, (_, i) => publisher.publish('', queue, Buffer.from(`m${i}`), { headers: { n: i } })));
    // Assess
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(500);
    expect(publisher.inFlight).toBe(0);
    const broker = testBroker();
    const copies = await broker.drain(queue, 500);
    const ids = new Set(copies.map((m) => m.properties.headers?.[BoomerangHeader.copyId]));
    expect(ids.size).toBe(500);
    expect(copies.every((m) => m.properties.headers?.n === Number(m.content.toString().slice(1)))).toBe(true);
  });

  it('rejects only the unroutable publish among routable ones, as returned, naming where it went', async () => {
    // Prepare
    const publisher = new ConfirmPublisher(channel, 10_000);
    const nowhere = uniqueName('nowhere');
    // Act
    const results = await Promise.allSettled([
      publisher.publish('', queue, Buffer.from('a'), {}),
      publisher.publish('', nowhere, Buffer.from('b'), {}),
      publisher.publish('', queue, Buffer.from('c'), {}),
    ]);
    // Assess
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const error = (results[1] as PromiseRejectedResult).reason as PublishError;
    expect(error).toBeInstanceOf(PublishError);
    expect(error.reason).toBe('returned');
    expect(error.message).toContain(`queue "${nowhere}"`);
    expect(await testBroker().messageCount(queue)).toBe(2);
  });

  it('ignores a returned message that another publisher stamped', async () => {
    // Prepare: a second publisher on the same channel publishes an unroutable copy
    const ours = new ConfirmPublisher(channel, 10_000);
    const theirs = new ConfirmPublisher(channel, 10_000);
    // Act
    const [mine, other] = await Promise.allSettled([
      ours.publish('', queue, Buffer.from('a'), {}),
      theirs.publish('', uniqueName('nowhere'), Buffer.from('b'), {}),
    ]);
    // Assess
    expect(mine.status).toBe('fulfilled');
    expect(other.status).toBe('rejected');
  });
});
