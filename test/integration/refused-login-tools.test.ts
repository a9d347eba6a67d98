import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { type ConsoleRun, startConsole } from '../helpers/console-process.js';
import { runParkedCli } from '../helpers/parked-cli.js';
import { useProxyToBroker } from '../helpers/tcp-proxy.js';

/**
 * A refused login or vhost is final: the parked CLI and the console used to retry it (through
 * amqp-connection-manager) until CONNECT_TIMEOUT_MS, or serve a page that only showed the error.
 * Through a proxy that counts connections, each tool must try once, fail, and say what `invoke` says.
 * CONNECT_TIMEOUT_MS is far above the tests' timeouts (15 s, for a cold tsx start under load): a tool
 * that waits it out fails the test.
 */
const proxy = useProxyToBroker(AMQP_URL);
const SLOW = { CONNECT_TIMEOUT_MS: '60000' };
const consoles: ConsoleRun[] = [];

// A console that serves a page instead of exiting must not outlive its failed test.
afterEach(() => {
  for (const run of consoles.splice(0)) if (run.child.exitCode === null) run.child.kill('SIGTERM');
});

/** AMQP_URL through the proxy, with a wrong password or another vhost. */
function refusedUrl(kind: 'login' | 'vhost'): { url: string; explanation: string; secret?: string } {
  const url = new URL(proxy().url(AMQP_URL));
  if (kind === 'login') {
    url.password = `wrong-${uniqueName('pw')}`;
    return {
      url: url.toString(),
      explanation: `Cannot connect to amqp://guest:***@127.0.0.1:${proxy().port}: the broker refused the login of user "guest": check the user name and password`,
      secret: url.password,
    };
  }
  const vhost = uniqueName('no-such-vhost');
  url.pathname = `/${vhost}`;
  return {
    url: url.toString(),
    explanation: `Cannot connect to amqp://guest:***@127.0.0.1:${proxy().port}/${vhost}: the broker refused to open vhost "${vhost}" for user "guest": the vhost does not exist`,
  };
}

describe.each(['login', 'vhost'] as const)('a refused %s', (kind) => {
  it('fails `parked list` at once, with the explanation invoke gives, after one connection', { timeout: 15_000 }, async () => {
    // Prepare
    const refused = refusedUrl(kind);
    const before = proxy().accepted;
    // Act
    const run = await runParkedCli(['list'], uniqueName('work'), { AMQP_URL: refused.url, ...SLOW });
    // Assess
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain(`BrokerConnectionError: ${refused.explanation}`);
    expect(run.stderr).not.toContain(refused.secret ?? '\0');
    expect(proxy().accepted - before).toBe(1);
  });

  it('makes the console exit 1 with that explanation instead of serving a page', { timeout: 15_000 }, async () => {
    // Prepare
    const refused = refusedUrl(kind);
    const before = proxy().accepted;
    // Act
    const run = startConsole(['--queue', uniqueName('work')], { AMQP_URL: refused.url, ...SLOW });
    consoles.push(run);
    const [code] = await once(run.child, 'exit');
    // Assess
    expect(code, run.stderr()).toBe(1);
    expect(run.stderr()).toContain(`BrokerConnectionError: ${refused.explanation}`);
    expect(run.stdout()).not.toContain('token=');
    expect(proxy().accepted - before).toBe(1);
  });
});
