import { describe, expect, it } from 'vitest';
import { type BrokerStarter, ensureBroker } from '../../shared/demo/ensure-broker.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { useProxyToBroker } from '../helpers/tcp-proxy.js';

/**
 * `npm run local` with a wrong password used to take the refused login for "not running", start a
 * second rabbitmq-server and wait 90 s. Against the real broker, a refused login or vhost must come
 * back at once with invoke's words, and the starter must never be asked.
 */
const proxy = useProxyToBroker(AMQP_URL);

/** A starter that records what it was asked, and starts nothing. */
function recordingStarter(): BrokerStarter & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    installed: () => {
      calls.push('installed');
      return true;
    },
    start: () => void calls.push('start'),
  };
}

describe('ensureBroker', () => {
  it.each([
    [
      'login',
      (url: URL) => {
        url.password = `wrong-${uniqueName('pw')}`;
      },
      'login-refused',
      'the broker refused the login of user "guest": check the user name and password',
    ],
    [
      'vhost',
      (url: URL) => {
        url.pathname = `/${uniqueName('no-such-vhost')}`;
      },
      'vhost-refused',
      'the broker refused to open vhost',
    ],
  ])('reports a refused %s at once and never starts a broker', { timeout: 10_000 }, async (_kind, change, reason, explanation) => {
    // Prepare
    const url = new URL(proxy().url(AMQP_URL));
    change(url);
    const starter = recordingStarter();
    const said: string[] = [];
    const before = proxy().accepted;
    // Act
    const error = (await ensureBroker([url.toString()], (line) => said.push(line), starter).catch((e: unknown) => e)) as Error & { reason?: string };
    // Assess
    expect(error.name).toBe('BrokerConnectionError');
    expect(error.reason).toBe(reason);
    expect(error.message).toContain(`Cannot connect to amqp://guest:***@127.0.0.1:${proxy().port}`);
    expect(error.message).toContain(explanation);
    expect(starter.calls).toEqual([]);
    expect(said).toEqual([]);
    expect(proxy().accepted - before).toBe(1);
  });

  it('returns without starting anything when the broker answers', async () => {
    // Prepare
    const starter = recordingStarter();
    // Act
    await ensureBroker([AMQP_URL], () => undefined, starter);
    // Assess
    expect(starter.calls).toEqual([]);
  });
});
