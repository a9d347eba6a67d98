import { buildConsoleAssets } from '../console/assets.js';
import { type ConsoleBroker, configBroker } from '../console/console-broker.js';
import { type ConsoleQueue, consoleQueuesFromConfig, consoleQueuesFromDeclared } from '../console/console-queue.js';
import { ConsoleService } from '../console/console-service.js';
import { startConsoleServer } from '../console/server.js';
import { type Config, loadConfig } from '../config/config.js';
import type { Env } from '../config/env.js';
import { parseRatePerSecond } from '../parked/token-bucket.js';
import { type DeclaredQueue, loadDeclaredQueues, pickQueue } from '../queues/declared-queues.js';
import { asEnvInt, asUsage, intFlag, parseCli } from './args.js';
import { lambdaInvoker } from './lambda-invoker.js';
import { remoteConsoleBroker } from './remote-console-broker.js';
import { type CliCommand, sameInThisRepository } from './command.js';
import { UsageError } from '../errors.js';
import { GuardedOutput } from '../observability/guarded-output.js';

const USAGE = `Usage: boomerang console [--function <name>]... | [--work-queue <name>]... [--host <address>] [--port <n>] [--rate <n/s>]
       [--functions-dir <dir>] [--remote <function name or ARN>]

The parking lot in a browser: queue depths, failures grouped by cause, each message in full; replay
a message, a group or a filtered selection, purge a group, edit and replay a message. It shows every
queue declared in functions/ (--functions-dir, else BOOMERANG_FUNCTIONS_DIR when set): its work
queue, delay queues and parking lot as its file and the environment configure them. It uses the
broker of AMQP_URL (or AMQP_SECRET_ID; with --remote, the operator function's) and the engine of
boomerang parked: reads leave the parking lot as it was, replays are confirmed and rate-limited. The last line it prints is the URL to open, with a random access token;
no data and no action without it.

  --function <name>  show this declared queue only (repeatable; default: every declared queue)
  --work-queue <name>  show this work queue, configured by the environment alone (repeatable;
                     WORK_QUEUE, PARKING_QUEUE...), instead of the declared queues (the old name
                     --queue still works)
  --host <address>   interface to listen on (default 127.0.0.1: this machine only)
  --port <n>         port (default: a free one)
  --rate <n>[/s|/m]  replay rate when the page asks for none (default 50/s)
  --remote <fn>      go through the construct's operator function (its name or ARN: the
                     OperatorFunctionName output) with your own AWS credentials, instead of AMQP_URL:
                     for a broker in a private network. Same pages, filters, confirmations and
                     byte-exact replays; the declared queues come from functions/ here, the broker
                     settings from the function's environment. The region comes from an ARN, else
                     AWS_REGION or the profile.

${sameInThisRepository('console')}`;

const stderr = GuardedOutput.of(process.stderr);
const say = (line: string): void => GuardedOutput.of(process.stdout).write(`${line}\n`);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(
    argv,
    {
      function: { type: 'string', multiple: true },
      'work-queue': { type: 'string', multiple: true },
      host: { type: 'string' },
      port: { type: 'string' },
      rate: { type: 'string' },
      remote: { type: 'string' },
    },
    { queue: 'work-queue' },
  );
  if (values.help) {
    say(USAGE);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const port = intFlag('port', values.port, 0, 65_535);
  const rate = values.rate === undefined ? undefined : parseRatePerSecond(values.rate);
  if (values.rate !== undefined && rate === undefined)
    throw new UsageError(`--rate must be a positive number of messages, such as 50, 50/s or 300/m; got ${JSON.stringify(values.rate)}`);
  const host = values.host ?? '127.0.0.1';
  if (values.remote !== undefined && values['work-queue'] !== undefined) {
    throw new UsageError('--remote shows the declared queues (functions/) its operator function serves: use --function <name>, not --work-queue');
  }
  const { config, queues } = await consoleQueues({ function: values.function, queue: values['work-queue'] }, process.env);
  const broker = values.remote === undefined ? configBroker(config) : remoteBroker(values.remote, process.env);
  await broker.check();
  const service = new ConsoleService({ queues, broker, retryHeader: config.retryHeader, defaultReplayRatePerSecond: rate });
  const server = await startConsoleServer({ service, assets: await buildConsoleAssets(), host, port });
  if (!['127.0.0.1', '::1', 'localhost'].includes(host)) {
    stderr.write(`warning: listening on ${host}: anyone who can reach it and has the token can replay and delete parked messages\n`);
  }
  say(`Boomerang console for ${broker.endpoint}`);
  if (values.remote !== undefined)
    say(`  every read and action goes through the operator function ${values.remote} (Lambda Invoke, with your AWS credentials)`);
  for (const q of queues)
    say(
      `  ${q.name === q.workQueue ? q.name : `${q.name} (work queue ${q.workQueue})`}: parking lot ${q.parkingQueue}, ${q.delayQueues.length} delay queue(s)`,
    );
  say('Ctrl-C stops it. Open:');
  say(server.url);
  await new Promise<void>((resolve) => process.once('SIGINT', resolve));
  await service.jobs.idle();
  await server.close();
  return 0;
}

/**
 * The queues to show, read before anything connects (a bad value is a `UsageError`, exit 2): those
 * `--work-queue` names (the environment's config), else those `--function` picks, else every declared
 * queue; with the config whose connection settings (environment-only) reach the broker.
 */
async function consoleQueues(
  flags: { readonly function?: string[]; readonly queue?: string[] },
  env: Env,
): Promise<{ config: Config; queues: ConsoleQueue[] }> {
  if (flags.queue !== undefined) {
    if (flags.function !== undefined)
      throw new UsageError(
        '--work-queue and --function go separately: --function shows declared queues (functions/), --work-queue work queues configured by the environment alone',
      );
    const config = await asUsage(() => loadConfig(env));
    return { config, queues: await asUsage(() => consoleQueuesFromConfig(config, flags.queue)) };
  }
  const declared = await asUsage(() => loadDeclaredQueues({ env }));
  const picked = flags.function === undefined ? declared : await asUsage(() => [...new Set(flags.function)].map((name) => pickQueue(declared, name)));
  const queues = await asUsage(() => consoleQueuesFromDeclared(picked, env));
  // Discovery refuses an empty folder and pickQueue an unknown name: there is a first queue.
  return { config: await asUsage(() => (picked[0] as DeclaredQueue).loadConfig(env, 'pull')), queues };
}

/** The broker through the operator function `target`; page and slice sizes from the environment (the tests' small ones). */
function remoteBroker(target: string, env: Env): ConsoleBroker {
  return remoteConsoleBroker(lambdaInvoker(target), {
    name: target,
    pageBytes: asEnvInt('BOOMERANG_REMOTE_PAGE_BYTES', env.BOOMERANG_REMOTE_PAGE_BYTES),
    sliceMs: asEnvInt('BOOMERANG_REMOTE_SLICE_MS', env.BOOMERANG_REMOTE_SLICE_MS),
  });
}

/** `boomerang console`. */
const consoleCommand: CliCommand = {
  name: 'console',
  summary: 'the operator console: the parking lots in a browser, with replay and purge',
  usage: USAGE,
  run: main,
};

export { consoleCommand };
