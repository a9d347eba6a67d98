import type { Channel, ChannelModel } from 'amqplib';

/**
 * How many messages wait in the parking lot now, for the `parkedDepth` metric: Amazon MQ for RabbitMQ
 * 4.x publishes no per-queue metrics, so the functions report the depth themselves. Read with a
 * passive declare on a channel of its own, because a missing queue closes the channel it is asked on.
 * Undefined when it cannot be read: the gauge never turns a settled invocation into a failed one.
 * @example summary.parkedDepth = await readParkedDepth(connection, config.parkingQueue);
 */
async function readParkedDepth(connection: ChannelModel, parkingQueue: string): Promise<number | undefined> {
  let channel: Channel | undefined;
  try {
    channel = await connection.createChannel();
    // A closed channel emits 'error' too: without a listener it would be thrown at the process.
    channel.on('error', () => undefined);
    const { messageCount } = await channel.checkQueue(parkingQueue);
    return messageCount;
  } catch {
    return undefined;
  } finally {
    await channel?.close().catch(() => undefined);
  }
}

export { readParkedDepth };
