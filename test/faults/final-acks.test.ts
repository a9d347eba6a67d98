import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../helpers/fakes.js';
import { runPull } from '../../shared/pull/pull.js';
import { AMQP_URL, sleep } from '../helpers/broker.js';
import { FaultScenario, withChannel } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';

/**
 * The last acks of an invocation must count. The invocation cancels its consumer as soon as it stops
 * taking messages, and the copies still being confirmed are acked after that cancel, right before the
 * channel closes. A quorum queue may ignore acks that arrive just before a channel close
 * (rabbitmq-server#10327; seen here on 3.10.8), so those originals come back: a duplicate of every
 * message acked in the last moments, under either ACK_ORDER (ack-then-publish promises none).
 *
 * No fault is injected: five invocations stop at MAX_MESSAGES with every message retried, and after
 * each the work queue must be empty.
 */
const MESSAGES = 2000;
const ROUNDS = 5;

describe('the last acks of an invocation', () => {
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it.each(['publish-then-ack', 'ack-then-publish'])('are not lost when the invocation stops at MAX_MESSAGES (%s, quorum work queue)', async (ackOrder) => {
    // Prepare: a delay long enough that no copy comes back during the test.
    scenario = await FaultScenario.prepare({
      url: AMQP_URL,
      label: 'final-acks',
      messages: 0,
      env: { ACK_ORDER: ackOrder, QUEUE_TYPE: 'quorum', MAX_MESSAGES: String(MESSAGES), MAX_RETRIES: '1', BACKOFF_INITIAL_MS: '600000', BACKOFF_JITTER: '0' },
    });
    const s = scenario;
    const fail = () => {
      throw new Error('partner down');
    };
    const leftPerRound: number[] = [];

    // Act
    for (let round = 0; round < ROUNDS; round++) {
      await s.publish(MESSAGES);
      const summary = await runPull({ config: s.config, handler: fail, budgetMs: 120_000, log: silentLogger });
      expect(summary).toMatchObject({ retried: MESSAGES, stoppedBecause: 'max-messages' });
      // Messages whose acks were ignored come back when the broker processes the channel close.
      await sleep(1000);
      const left = await withChannel(AMQP_URL, async (_c, channel) => (await channel.checkQueue(s.config.workQueue)).messageCount);
      leftPerRound.push(left);
      await withChannel(AMQP_URL, (_c, channel) => channel.purgeQueue(s.config.workQueue));
    }

    // Assess
    reportFault(`final-acks-${ackOrder}`, { messagesPerRound: MESSAGES, rounds: ROUNDS, originalsBackAfterTheirCopyWasMade: leftPerRound });
    expect(leftPerRound).toEqual(leftPerRound.map(() => 0));
  });
});
