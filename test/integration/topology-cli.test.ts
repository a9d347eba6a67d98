import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';

type Run = { readonly code: number | null; readonly stdout: string; readonly stderr: string };

/** Runs `npm run topology -- <args>` as npm does (node + tsx); killed after 25 s (a hang fails the test). */
function topology(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'shared/cli/topology.ts', ...args], { env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...env }, timeout: 25_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** TEST-NET-1 (RFC 5737): nothing answers there, so a run that tried to connect would not exit 2. */
const NOWHERE = 'amqp://guest:guest@192.0.2.1:5672';

describe('npm run topology', () => {
  it.each([
    [['verify'], { MAX_RETRIES: 'abc' }, 'MAX_RETRIES'],
    [['apply'], { RETRY_HEADER: 'x-death' }, 'RETRY_HEADER'],
    [['verify', '--queue', 'amq.orders'], {}, 'WORK_QUEUE must not start with "amq."'],
  ])('exits 2 with the usage on a bad environment or flag (%j, %j), before connecting', async (args, env, named) => {
    // Act
    const run = await topology(args, { AMQP_URL: NOWHERE, ...env });

    // Assess
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(named);
    expect(run.stderr).toContain('Usage: npm run topology');
  });
});
