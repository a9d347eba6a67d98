import { afterEach, describe, expect, it } from 'vitest';
import { AMQP_URL } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
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
      env: { ...scenario.env, LOG_LEVEL: 'error' },
    }).exited;

    // Assess: the cut-off attempt counted (a retry copy), and nothing is lost.
    expect(result.code, result.stderr).toBe(0);
    expect(result.summary).toMatchObject({ received: 1, retried: 1 });
  }, 25_000);
});
