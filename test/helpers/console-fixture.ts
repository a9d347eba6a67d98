import { request } from 'node:http';
import { loadConfig, type Config } from '../../shared/config/config.js';
import { buildConsoleAssets } from '../../shared/console/assets.js';
import { configBroker } from '../../shared/console/console-broker.js';
import { consoleQueuesFromConfig, consoleQueuesFromDeclared, type ConsoleQueue } from '../../shared/console/console-queue.js';
import { ConsoleService } from '../../shared/console/console-service.js';
import { startConsoleServer, type ConsoleServer } from '../../shared/console/server.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { type DeclaredQueue, loadDeclaredQueues } from '../../shared/queues/declared-queues.js';
import { writeQueueFile } from '../fixtures/queue-files.js';
import { AMQP_URL, type TestBroker, uniqueName } from './broker.js';
import { setUpTopology } from './engine.js';

/** The three kinds of failure the console tests park: counts 4, 3 and 2, so every group has its own count. */
const KINDS = [
  { errorName: 'PartnerDown', message: (i: number) => `POST https://partner.example/hooks/${i} returned 50${i % 4}`, count: 4 },
  { errorName: 'ValidationError', message: (i: number) => `order-${1000 + i}: field amount is missing`, count: 3 },
  { errorName: 'TimeoutError', message: (i: number) => `no answer after ${3000 + i}ms`, count: 2 },
] as const;

/** The config of a console test's work queue: the defaults, on the test broker. */
function consoleTestConfig(work: string): Config {
  return loadConfig({ AMQP_URL, WORK_QUEUE: work });
}

/** A work queue, its delay tiers and its parking lot (quorum), with the three kinds parked as Boomerang parks them: `<kind>-<i>` ids. */
async function parkThreeKinds(broker: TestBroker): Promise<{ work: string; parked: string }> {
  const work = uniqueName('console');
  const parked = `${work}.parked`;
  // The whole topology (work queue, delay tiers, parking lot), so the pull function can run on it.
  await setUpTopology(broker, consoleTestConfig(work));
  const channel = await broker.connection.createConfirmChannel();
  for (const kind of KINDS) {
    for (let i = 0; i < kind.count; i++) {
      channel.sendToQueue(parked, Buffer.from(JSON.stringify({ kind: kind.errorName, i })), {
        persistent: true,
        messageId: `${kind.errorName}-${i}`,
        contentType: 'application/json',
        headers: {
          tenant: 'acme',
          'x-retry-no': 5,
          [BoomerangHeader.errorName]: kind.errorName,
          [BoomerangHeader.errorMessage]: kind.message(i),
          [BoomerangHeader.errorStack]: `${kind.errorName}: ${kind.message(i)}\n    at deliver (webhook-delivery.ts:42:11)`,
          [BoomerangHeader.attempts]: 6,
          [BoomerangHeader.parkReason]: 'retries exhausted: 5 of 5 made',
          [BoomerangHeader.firstFailureAt]: new Date(Date.now() - 3_600_000).toISOString(),
          [BoomerangHeader.lastFailureAt]: new Date(Date.now() - 60_000 * (i + 1)).toISOString(),
          [BoomerangHeader.parkedAt]: new Date(Date.now() - 60_000 * (i + 1)).toISOString(),
          [BoomerangHeader.sourceQueue]: work,
        },
      });
    }
  }
  await channel.waitForConfirms();
  await channel.close();
  return { work, parked };
}

/** The console for one work queue on the test broker, as `npm run console` starts it. */
async function startTestConsole(work: string, options: { readonly rate?: number } = {}): Promise<{ server: ConsoleServer; service: ConsoleService }> {
  const config = consoleTestConfig(work);
  const service = new ConsoleService({
    queues: consoleQueuesFromConfig(config),
    broker: configBroker(config),
    retryHeader: config.retryHeader,
    defaultReplayRatePerSecond: options.rate,
  });
  const server = await startConsoleServer({ service, assets: await buildConsoleAssets() });
  return { server, service };
}

/** The console over the queues declared in `dir` (test/fixtures/queue-files.ts writes them), as `npm run console` starts it with BOOMERANG_FUNCTIONS_DIR. */
async function startDeclaredConsole(dir: string): Promise<{ server: ConsoleServer; service: ConsoleService; queues: ConsoleQueue[] }> {
  const env = { AMQP_URL };
  const queues = consoleQueuesFromDeclared(await loadDeclaredQueues({ dir, env }), env);
  const config = consoleTestConfig(queues[0]?.workQueue ?? 'unused');
  const service = new ConsoleService({ queues, broker: configBroker(config), retryHeader: config.retryHeader });
  const server = await startConsoleServer({ service, assets: await buildConsoleAssets() });
  return { server, service, queues };
}

/**
 * Two queues declared in `dir`: `invoices`, with its whole topology and the three kinds parked, and
 * `partner-sync`, whose work queue `undeclared` and the rest were never declared on the broker.
 */
async function declareOneOfTwo(broker: TestBroker, dir: string): Promise<{ work: string; undeclared: string }> {
  const { work } = await parkThreeKinds(broker);
  const undeclared = uniqueName('console-missing');
  // Never declared, but a read of its parking lot declares the lot's reader lock (test cleanup deletes it with the lot).
  broker.trackQueue(`${undeclared}.parked`);
  writeQueueFile(dir, { template: 'orders', name: 'invoices', workQueue: work });
  writeQueueFile(dir, { template: 'orders', name: 'partner-sync', workQueue: undeclared });
  const declared = await loadDeclaredQueues({ dir, env: { AMQP_URL } });
  // The template's retry policy names its own delay queues: invoices gets them too.
  await setUpTopology(broker, (declared.find((q) => q.name === 'invoices') as DeclaredQueue).loadConfig({ AMQP_URL }, 'pull'));
  return { work, undeclared };
}

/** The status of a GET with this Host header: fetch() will not send another Host (a page on a rebinding domain would), node:http will. */
function statusWithHost(url: string, host: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { ...headers, host } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
}

export { consoleTestConfig, declareOneOfTwo, KINDS, parkThreeKinds, startDeclaredConsole, startTestConsole, statusWithHost };
