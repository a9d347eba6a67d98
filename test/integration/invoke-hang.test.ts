import { afterEach, describe, expect, it } from 'vitest';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { AMQP_URL } from '../helpers/broker.js';
import { FaultScenario, withChannel } from '../helpers/fault-scenario.js';
import { spawnInvoke } from '../helpers/invoke-child.js';

describe('boomerang invoke pull with a handler that never settles', () => {
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it('prints its summary and exits at the hard stop, though the handler keeps the event loop busy', async () => {
    // Prepare
    scenario = await FaultScenario.prepare({ url: AMQP_URL, label: 'hang', messages: 1, env: { SAFETY_MARGIN_MS: '1000' } });

    // Act: a 3 s budget; the test's own 25 s timeout is what a hang would hit.
    const result = await spawnInvoke({
      handler: 'test/fixtures/handlers/never-settles.ts',
      queue: scenario.config.workQueue,
      budgetMs: 3_000,
      // A time limit past the stop: the hard stop, not the attempt's limit, ends this one.
      env: { ...scenario.env, ATTEMPT_TIMEOUT_MS: '900000', LOG_LEVEL: 'error' },
    }).exited;

    // Assess: the cut-off attempt counted (a retry copy), and nothing is lost.
    expect(result.code, result.stderr).toBe(0);
    expect(result.summary).toMatchObject({ received: 1, retried: 1 });
  }, 25_000);

  it('times out a hung first attempt and handles the healthy message behind it in the same invocation', async () => {
    // Prepare: the hung message first, so that it is the half-open start's one attempt
    scenario = await FaultScenario.prepare({ url: AMQP_URL, label: 'hang-first', messages: 0, env: {} });
    const json = (body: unknown, id: string) => ({
      key: id,
      content: Buffer.from(JSON.stringify(body)),
      options: { persistent: true, messageId: id, contentType: 'application/json' },
    });
    await scenario.publishRaw([json({ hang: true }, 'hung'), json({ hang: false }, 'healthy')]);

    // Act: the issue's own run: an 8 s budget, the default 3 s margin, no ATTEMPT_TIMEOUT_MS (so 2.5 s)
    const invoke = () =>
      spawnInvoke({
        handler: 'test/fixtures/handlers/hangs-when-told.ts',
        queue: scenario?.config.workQueue as string,
        budgetMs: 8_000,
        env: { ...scenario?.env, MAX_RETRIES: '1', LOG_LEVEL: 'error' },
      }).exited;
    const first = await invoke();

    // Assess: both tried, the healthy one acked, the hung one retried, before the budget's stop
    expect(first.code, first.stderr).toBe(0);
    expect(first.summary).toMatchObject({ received: 2, acked: 1, retried: 1, parked: 0, requeued: 0 });
    expect(first.summary?.stoppedBecause).not.toBe('budget');

    // Act: once its 1 s retry delay is over, it hangs again, with its one retry spent
    await waitForCount(scenario.config.workQueue, 1);
    const second = await invoke();

    // Assess: parked, naming the timeout
    expect(second.summary).toMatchObject({ received: 1, parked: 1 });
    const parked = await withChannel(AMQP_URL, async (_connection, channel) => channel.get(scenario?.config.parkingQueue as string, { noAck: true }));
    expect(parked === false ? undefined : parked.properties.messageId).toBe('hung');
    const headers = parked === false ? {} : (parked.properties.headers ?? {});
    expect(headers[BoomerangHeader.errorName]).toBe('HandlerTimeoutError');
    // Half of what is left of the 5 s the invocation takes messages for, once the CLI started it: 2.5 s, a few ms less.
    expect(String(headers[BoomerangHeader.errorMessage])).toMatch(/did not finish within 2(4\d\d|500) ms/);
  }, 40_000);
});

/** Waits (up to 10 s) until `queue` holds `count` ready messages. */
async function waitForCount(queue: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const ready = await withChannel(AMQP_URL, async (_connection, channel) => (await channel.checkQueue(queue)).messageCount);
    if (ready >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${queue} did not reach ${count} ready messages in 10 s`);
}
