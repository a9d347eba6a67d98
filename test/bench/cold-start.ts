/**
 * One cold start, as the bench measures it: a message published for it, a fresh `node` process that
 * imports a bundle and invokes it once (cold-start-child.mjs, or the anchor's), and the local partner's
 * first request, which marks the message handled.
 */
import { spawn } from 'node:child_process';
import type { BenchBroker } from './bench-broker.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';

/** Runs a cold-start child script (`args`, from the repository root) and resolves with the JSON line it prints last. */
function runChild(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ startedAt: number; importedAt: number; socketAt?: number; error?: string; summary?: unknown }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', () => {
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? ''));
      } catch {
        reject(new Error(`cold-start child printed no result: ${out.slice(-500)} ${err.slice(-500)}`));
      }
    });
  });
}

/** What one cold start took, from the fresh process's start: to the end of the bundle's import, and to its first handled message. */
type ColdStart = { readonly firstHandledMs: number; readonly importMs: number };

/** Publishes one message to `queue`, confirmed: the next cold start handles it. */
async function publishOne(broker: BenchBroker, queue: string, body: string, id: string): Promise<void> {
  const channel = await broker.connection.createConfirmChannel();
  channel.sendToQueue(queue, Buffer.from(body), { persistent: true, messageId: id, contentType: 'application/json' });
  await channel.waitForConfirms();
  await channel.close();
}

/** Runs one cold-start child (`args`) and times it against the partner's first request; throws, naming `label`, when none came. */
async function timeColdStart(
  args: readonly string[],
  env: Record<string, string>,
  partner: { readonly arrivals: number[] },
  label: string,
): Promise<ColdStart> {
  partner.arrivals.length = 0;
  const child = await runChild(args, env);
  const arrivedAt = partner.arrivals[0];
  if (child.error || arrivedAt === undefined) throw new Error(`${label}: no handled message (${child.error ?? 'the partner got no request'})`);
  return { firstHandledMs: arrivedAt - child.startedAt, importMs: child.importedAt - child.startedAt };
}

export { publishOne, runChild, timeColdStart };
export type { ColdStart };
