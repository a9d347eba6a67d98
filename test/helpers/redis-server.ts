import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { closedPort } from './idempotency-stores.js';

/** A Redis server of one test, started as a child process, that asks for a password. */
type PasswordRedis = {
  /** `redis://127.0.0.1:<port>`, without the password. */
  readonly url: string;
  /** A client logged in as the default user (it stays logged in when the password changes). */
  readonly admin: Redis;
  stop(): Promise<void>;
};

/** How long the server may take to say it is ready. */
const START_TIMEOUT_MS = 10_000;

/**
 * Starts `redis-server` on a free port with `requirepass`, no persistence; fails loudly when
 * `redis-server` is not installed (the tests' machine has it, next to the Redis on 6379).
 * @example const server = await startPasswordRedis('s3cret'); try { ... } finally { await server.stop(); }
 */
async function startPasswordRedis(password: string): Promise<PasswordRedis> {
  execFileSync('which', ['redis-server']);
  const port = await closedPort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--requirepass', password, '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await ready(child, port);
  const url = `redis://127.0.0.1:${port}`;
  const admin = new Redis(url, { password, lazyConnect: true });
  await admin.connect();
  return {
    url,
    admin,
    stop: async () => {
      admin.disconnect();
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

function ready(child: ChildProcess, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server on port ${port} was not ready within ${START_TIMEOUT_MS} ms:\n${output}`));
    }, START_TIMEOUT_MS);
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server on port ${port} exited with ${String(code)}:\n${output}`));
    });
  });
}

export { startPasswordRedis };
export type { PasswordRedis };
