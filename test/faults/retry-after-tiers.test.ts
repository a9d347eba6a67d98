import { afterEach, describe, expect, it } from 'vitest';
import type { Handler } from '../../shared/message/message.js';
import { silentLogger } from '../helpers/fakes.js';
import { runPull } from '../../shared/pull/pull.js';
import { AMQP_URL, sleep } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';

/**
 * A partner's Retry-After must be honoured in `tiers` mode too: the README's handler contract says a
 * `retryAfterMs` is retried "no sooner than that (capped at BACKOFF_MAX_MS)". Regression: the tiers
 * were once only the backoff's own delays (here 100, 200, 400 ms), and a request above the largest
 * snapped DOWN to it, so a 429 with `Retry-After: 60` came back after 16 s with the defaults. The
 * tiers now keep doubling up to the cap, so this 2 s request waits the 3.2 s tier.
 */
describe('Retry-After in tiers mode', () => {
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it('is not retried sooner than asked when the request is above the largest tier', async () => {
    // Prepare: tiers 100, 200, 400 ms; BACKOFF_MAX_MS stays at its default (1 h).
    scenario = await FaultScenario.prepare({
      url: AMQP_URL,
      label: 'retry-after',
      messages: 1,
      env: { DELAY_MODE: 'tiers', MAX_RETRIES: '3', BACKOFF_INITIAL_MS: '100', BACKOFF_MULTIPLIER: '2', BACKOFF_JITTER: '0', IDLE_TIMEOUT_MS: '200' },
    });
    const s = scenario;
    const attempts: number[] = [];
    const handler: Handler = () => {
      attempts.push(Date.now());
      if (attempts.length === 1) throw Object.assign(new Error('429 Too Many Requests'), { retryAfterMs: 2000 });
    };

    // Act: invoke as a scheduler would until the message came back.
    const deadline = Date.now() + 10_000;
    while (attempts.length < 2 && Date.now() < deadline) {
      await runPull({ config: s.config, handler, budgetMs: 3000, log: silentLogger });
      await sleep(50);
    }

    // Assess
    const waitedMs = (attempts[1] ?? Number.NaN) - (attempts[0] ?? Number.NaN);
    reportFault('retry-after-tiers', { askedMs: 2000, backoffTiersMs: [100, 200, 400], waitedMs });
    expect(attempts).toHaveLength(2);
    expect(waitedMs).toBeGreaterThanOrEqual(2000);
  });
});
