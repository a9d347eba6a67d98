import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import type { Summary } from '../../shared/observability/summary.js';
import { AMQP_URL } from './broker.js';

type BundleRun = { readonly code: number; readonly stdout: string; readonly stderr: string };

/**
 * Imports a built bundle in a plain `node` process (no tsx, no vitest, no node_modules next to it, as
 * in Lambda), calls its `handler` with `event` and a stub context, and resolves however the handler
 * ended: what it returned on stdout, or a throw as exit 1, as Lambda would record an error.
 */
function runBundle(file: string, event: unknown, env: Record<string, string>): Promise<BundleRun> {
  const script = `
    const { handler } = await import(${JSON.stringify(`file://${file}`)});
    const deadline = Date.now() + 4000;
    const context = { awsRequestId: 'bundle-test', functionName: 'bundle-test', getRemainingTimeInMillis: () => deadline - Date.now() };
    process.stdout.write(JSON.stringify(await handler(JSON.parse(process.env.TEST_EVENT), context)));`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { cwd: dirname(file), env: { PATH: process.env.PATH, ...env, TEST_EVENT: JSON.stringify(event) } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** As `runBundle`, resolving with the summary the handler returned; a failed invocation rejects with its stderr. */
function invokeBundle(file: string, event: unknown, env: Record<string, string>): Promise<Summary> {
  return runBundle(file, event, env).then(({ code, stdout, stderr }) => {
    if (code !== 0) throw new Error(`the bundle failed (exit ${code}):\n${stderr}`);
    return JSON.parse(stdout) as Summary;
  });
}

/** A local partner for the webhook delivery: 200 on /ok, 503 on anything else. */
async function startPartner(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(request.url === '/ok' ? 200 : 503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A bundled function's environment for a test's own queue: the local broker, short delays, no logs. */
function functionEnv(workQueue: string): Record<string, string> {
  return {
    AMQP_URL,
    WORK_QUEUE: workQueue,
    BACKOFF_INITIAL_MS: '200',
    BACKOFF_MAX_MS: '3200',
    BACKOFF_JITTER: '0',
    MAX_RETRIES: '3',
    IDLE_TIMEOUT_MS: '150',
    SAFETY_MARGIN_MS: '500',
    LOG_LEVEL: 'silent',
  };
}

export { functionEnv, invokeBundle, runBundle, startPartner };
