import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AMQP_URL } from '../helpers/broker.js';
import { parkThreeKinds } from '../helpers/console-fixture.js';
import { useTestBroker } from '../helpers/topology.js';

const CLI = fileURLToPath(new URL('../../shared/cli/console.ts', import.meta.url));
const TSX = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));
const broker = useTestBroker();

describe('npm run console', () => {
  it('prints the URL with its token as the last start-up line, never the password, and stops on Ctrl-C', async () => {
    // Prepare
    const { work } = await parkThreeKinds(broker());
    const child = spawn(process.execPath, [TSX, CLI, '--queue', work], { env: { ...process.env, AMQP_URL }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    // Act
    while (!/\?token=\S+\n$/.test(stdout) && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 100));
    const url = stdout.trim().split('\n').at(-1) as string;
    const withToken = await fetch(url, { redirect: 'manual' });
    const without = await fetch(new URL('/api/overview', url));
    child.kill('SIGINT');
    const [code] = await once(child, 'exit');
    // Assess
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
    expect(stdout).toContain(`${work}: parking lot ${work}.parked`);
    expect(stdout).not.toContain('guest:guest');
    expect([withToken.status, without.status]).toEqual([303, 401]);
    expect(code).toBe(0);
  });
});
