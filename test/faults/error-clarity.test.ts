import { afterEach, describe, expect, it } from 'vitest';
import type { Handler } from '../../shared/message/message.js';
import { silentLogger } from '../helpers/fakes.js';
import { PullAbortedError } from '../../shared/core/invocation-errors.js';
import { runPull } from '../../shared/pull/pull.js';
import { AMQP_URL, sleep } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';
import { useProxyToBroker } from '../helpers/tcp-proxy.js';

/**
 * When the network drops, the invocation's error and summary must say so. The summary has a stop
 * reason for it, `connection-lost`; but amqplib closes every channel of a dropped connection first,
 * and the invocation reports whichever it hears of first: today "The channel closed" with
 * `stoppedBecause: 'channel-closed'`, the same words as a channel closed by a broker error, and no
 * cause. An operator reading the log cannot tell a network cut from a bad publish.
 */
describe('the error of an invocation whose connection drops', () => {
  const proxy = useProxyToBroker(AMQP_URL);
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it('names the lost connection, not a closed channel', async () => {
    // Prepare: a handler slow enough that the cut lands mid-batch.
    scenario = await FaultScenario.prepare({ url: proxy().url(AMQP_URL), label: 'clarity', messages: 200, env: { IDLE_TIMEOUT_MS: '1000' } });
    const s = scenario;
    let handled = 0;
    const handler: Handler = async () => {
      handled++;
      await sleep(5);
    };

    // Act
    const invocation = runPull({ config: s.config, handler, budgetMs: 20_000, log: silentLogger }).catch((error: unknown) => error);
    while (handled < 20) await sleep(5);
    proxy().cutAll();
    const error = await invocation;

    // Assess
    expect(error).toBeInstanceOf(PullAbortedError);
    const aborted = error as PullAbortedError;
    reportFault('error-clarity', { message: aborted.message, stoppedBecause: aborted.summary.stoppedBecause });
    expect(aborted.summary.stoppedBecause).toBe('connection-lost');
    expect(aborted.message).toMatch(/connection/i);
  });
});
