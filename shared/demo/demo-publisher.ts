import type { ManagedConnection } from '../amqp/managed-connection.js';

/** One message the demo publishes. */
type DemoMessage = { readonly messageId: string; readonly body: unknown };

/**
 * Publishes the demo's messages to `queue` through a confirm `ChannelWrapper` of amqp-connection-manager:
 * persistent JSON, each confirmed by the broker; should the connection drop meanwhile, the wrapper
 * sets its channel up again and re-sends what was not confirmed (a duplicate is possible, a loss is not).
 * Resolves with how many were confirmed.
 * @example await publishDemoMessages(managed, 'boomerang.demo', [{ messageId: 'order-0', body: { order: 0 } }]);
 */
async function publishDemoMessages(managed: ManagedConnection, queue: string, messages: Iterable<DemoMessage>): Promise<number> {
  const channel = managed.manager.createChannel({ confirm: true });
  try {
    const confirms: Promise<unknown>[] = [];
    for (const { messageId, body } of messages) {
      confirms.push(channel.sendToQueue(queue, Buffer.from(JSON.stringify(body)), { persistent: true, messageId, contentType: 'application/json' }));
    }
    await Promise.all(confirms);
    return confirms.length;
  } finally {
    await channel.close();
  }
}

export { publishDemoMessages };
