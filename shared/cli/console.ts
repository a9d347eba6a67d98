import { buildConsoleAssets } from '../console/assets.js';
import { configBroker } from '../console/console-broker.js';
import { consoleQueuesFromConfig } from '../console/console-queue.js';
import { ConsoleService } from '../console/console-service.js';
import { startConsoleServer } from '../console/server.js';
import { loadConfig } from '../config/config.js';
import { parseRatePerSecond } from '../parked/token-bucket.js';
import { asUsage, intFlag, parseCli, runCli, UsageError } from './args.js';
import { GuardedOutput } from './guarded-output.js';

const USAGE = `Usage: npm run console -- [--queue <work-queue>]... [--host <address>] [--port <n>] [--rate <n/s>]

The parking lot in a browser: queue depths, failures grouped by cause, each message in full; replay
a message, a group or a filtered selection, purge a group, edit and replay a message. It uses the
broker of AMQP_URL (or AMQP_SECRET_ID) and the parked CLI's engine: reads leave the parking lot as
it was, replays are confirmed and rate-limited. The last line it prints is the URL to open, with a
random access token; nothing answers without it.

  --queue <name>     a work queue to show (repeatable; default WORK_QUEUE, with PARKING_QUEUE)
  --host <address>   interface to listen on (default 127.0.0.1: this machine only)
  --port <n>         port (default: a free one)
  --rate <n>[/s|/m]  replay rate when the page asks for none (default 50/s)`;

const stderr = GuardedOutput.of(process.stderr);
const say = (line: string): void => GuardedOutput.of(process.stdout).write(`${line}\n`);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(argv, { queue: { type: 'string', multiple: true }, host: { type: 'string' }, port: { type: 'string' }, rate: { type: 'string' } });
  if (values.help) {
    say(USAGE);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const port = intFlag('port', values.port, 0, 65_535);
  const rate = values.rate === undefined ? undefined : parseRatePerSecond(values.rate);
  if (values.rate !== undefined && rate === undefined) throw new UsageError(`--rate must be a positive number of messages, such as 50, 50/s or 300/m; got ${JSON.stringify(values.rate)}`);
  const host = values.host ?? '127.0.0.1';
  const config = await asUsage(() => loadConfig());
  const queues = await asUsage(() => consoleQueuesFromConfig(config, values.queue ?? []));
  const broker = configBroker(config);
  const service = new ConsoleService({ queues, broker, retryHeader: config.retryHeader, defaultReplayRatePerSecond: rate });
  const server = await startConsoleServer({ service, assets: await buildConsoleAssets(), host, port });
  if (!['127.0.0.1', '::1', 'localhost'].includes(host)) {
    stderr.write(`warning: listening on ${host}: anyone who can reach it and has the token can replay and delete parked messages\n`);
  }
  say(`Boomerang console for ${broker.endpoint}`);
  for (const q of queues) say(`  ${q.workQueue}: parking lot ${q.parkingQueue}, ${q.delayQueues.length} delay queue(s)`);
  say('Ctrl-C stops it. Open:');
  say(server.url);
  await new Promise<void>((resolve) => process.once('SIGINT', resolve));
  await service.jobs.idle();
  await server.close();
  return 0;
}

await runCli(USAGE, () => main(process.argv.slice(2)));
