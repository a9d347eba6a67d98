import { describe, expect, it } from 'vitest';
import { getQueue, type ManagementRequest, type ManagementResponse } from '../../shared/native/amqp10-management.js';

/** A request function that answers every request with `response` and records what it was asked. */
function answering(response: ManagementResponse): { request: ManagementRequest; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    request: async (method, path) => {
      asked.push(`${method} ${path}`);
      return response;
    },
  };
}

/** The body RabbitMQ 4.3.6 answered for a native work queue (measured), as rhea decodes it. */
const QUORUM_BODY = {
  leader: 'rabbit@host',
  message_count: 2,
  consumer_count: 1,
  name: 'orders',
  vhost: '/',
  durable: true,
  auto_delete: false,
  exclusive: false,
  type: 'quorum',
  arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': '', 'x-delivery-limit': 116 },
  replicas: ['rabbit@host'],
};

describe('getQueue', () => {
  it('reads the type, the own arguments and the counts of a 200 answer, asking for the percent-encoded name', async () => {
    // Prepare
    const { request, asked } = answering({ status: '200', body: { ...QUORUM_BODY, name: 'a/b c%' } });
    // Act
    const queue = await getQueue(request, 'a/b c%');
    // Assess
    expect(asked).toEqual(['GET /queues/a%2Fb%20c%25']);
    expect(queue).toEqual({ name: 'a/b c%', type: 'quorum', arguments: QUORUM_BODY.arguments, messageCount: 2, consumerCount: 1 });
  });

  it('returns undefined when the queue does not exist (404)', async () => {
    // Prepare
    const { request } = answering({ status: '404', body: "queue 'orders' in vhost '/' not found" });
    // Act
    const queue = await getQueue(request, 'orders');
    // Assess
    expect(queue).toBeUndefined();
  });

  it('reads a count past 2^53 that rhea gives as a bigint, and keeps only plain argument values', async () => {
    // Prepare
    const body = { ...QUORUM_BODY, message_count: 7n, arguments: { 'x-max-length': 10n, 'x-table': { a: 1 }, 'x-flag': true } };
    const { request } = answering({ status: '200', body });
    // Act
    const queue = await getQueue(request, 'orders');
    // Assess
    expect(queue?.messageCount).toBe(7);
    expect(queue?.arguments).toEqual({ 'x-max-length': 10, 'x-flag': true });
  });

  it.each([
    ['another status', { status: '403', body: 'access refused' }, /answered GET \/queues\/orders with 403: access refused/],
    ['a 200 that is no queue', { status: '200', body: { name: 'orders' } }, /answered GET \/queues\/orders with 200: \{"name":"orders"\}/],
  ])('fails with a BrokerConnectionError naming the status and what the broker said, for %s', async (_case, response, message) => {
    // Prepare
    const { request } = answering(response);
    // Act
    const error = await getQueue(request, 'orders').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    // Assess
    expect(error?.name).toBe('BrokerConnectionError');
    expect(error?.message).toMatch(message);
  });
});
