import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { vhostOfConfig } from '../amqp/broker-endpoints.js';
import { createEventFunction } from '../event/event-function.js';
import { type SampleMessage, sampleEvent } from '../event/sample-event.js';
import { createPullFunction } from '../pull/pull-function.js';
import { DEFAULTS } from '../config/config.js';
import { ConfigError, UsageError } from '../errors.js';
import { overrideNote, singleTarget } from './queue-flags.js';
import { summaryOf } from '../core/lambda-function.js';
import { asUsage, intFlag, parseCli } from './args.js';
import { type CliCommand, sameInThisRepository } from './command.js';
import type { Handler } from '../message/message.js';

const USAGE = `Usage: boomerang invoke pull  --function <name> [--budget-ms <n>] [--functions-dir <dir>]
       boomerang invoke event --function <name> (--event <file.json> | --sample [--body <text>] [--count <n>]) [--budget-ms <n>]
       boomerang invoke pull|event --handler <module> [--work-queue <name>] [--event <file.json> | --sample] [--budget-ms <n>]

Runs one invocation of a function locally, as the cloud would run it, against the broker in AMQP_URL
(default ${DEFAULTS.amqpUrl.replace(/:[^:@/]*@/, ':***@')}), or the one AMQP_SECRET_ID describes.

  pull                 the scheduled pull function: consumes the work queue until it is idle
  event                the Amazon MQ event source function, given an aws:rmq event from a file
                       (--event), or one made here for the queue's work queue (--sample)

  --function <name>    the declared queue to run (a functions/*.ts file exporting \`queue\` made by
                       defineQueue; the folder is --functions-dir, else BOOMERANG_FUNCTIONS_DIR when
                       set): its handler, and its options in code before the environment. Optional
                       when one queue is declared
  --event <file>       the aws:rmq event (JSON) for 'event'; its keys name the queues ("<queue>::<vhost>")
  --sample             instead of --event: an event as Amazon MQ writes one, for the work queue
  --body <text>        with --sample: each message's body (default {"sample":<n>}, as JSON)
  --count <n>          with --sample: how many messages the event holds (default 1, at most 10000)
  --handler <module>   instead of --function: a module exporting handle(message, context) or a default
                       function, configured by the environment alone (WORK_QUEUE, MAX_RETRIES...)
  --work-queue <name>  with --handler: the work queue (default: WORK_QUEUE, else ${DEFAULTS.workQueue}); with
                       'event' it only decides which event queue parks into PARKING_QUEUE (the old
                       name --queue still works)
  --budget-ms <n>      the invocation's time budget (default: BUDGET_MS, else ${DEFAULTS.budgetMs})
  -h, --help           this text

Logs go to stderr as JSON lines; the last stdout line is the summary as one JSON object.
Exit codes: 0 done, 1 the invocation failed (for 'event': the event source would deliver the whole
batch again; the summary says how far it got), 2 bad usage: a flag, an environment variable, or
the file --handler or --event names (checked before connecting).
The topology of every queue involved must exist first: boomerang topology apply [--function <name>]
${sameInThisRepository('invoke')}`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(
    argv,
    {
      function: { type: 'string' },
      handler: { type: 'string' },
      'work-queue': { type: 'string' },
      'budget-ms': { type: 'string' },
      event: { type: 'string' },
      sample: { type: 'boolean' },
      body: { type: 'string' },
      count: { type: 'string' },
    },
    { queue: 'work-queue' },
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [mode, ...extra] = positionals;
  if (mode !== 'pull' && mode !== 'event')
    throw new UsageError(
      mode === undefined ? 'say which function to invoke: pull or event' : `unknown function ${JSON.stringify(mode)}; expected pull or event`,
    );
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  if (mode === 'event' && (values.event === undefined) === (values.sample === undefined))
    throw new UsageError('event needs its event: --event <file.json>, or --sample for one made here');
  if (mode === 'pull' && (values.event !== undefined || values.sample !== undefined))
    throw new UsageError('--event and --sample are for the event function only');
  if (values.sample === undefined && (values.body !== undefined || values.count !== undefined)) throw new UsageError('--body and --count go with --sample');
  const sampleCount = intFlag('count', values.count, 1, 10_000) ?? 1;
  const budgetFlag = intFlag('budget-ms', values['budget-ms'], 100);
  if (values.handler !== undefined && values.function !== undefined)
    throw new UsageError('--handler and --function go separately: --function runs a declared queue with its own handler');
  if (values.handler === undefined && values['work-queue'] !== undefined)
    throw new UsageError('--work-queue goes with --handler; a declared queue (--function) consumes the work queue set in its file');
  // Everything the invocation is given, read before it starts: a bad value is bad input (exit 2).
  const target =
    values.handler === undefined
      ? await singleTarget({ function: values.function }, process.env, mode)
      : {
          ...(await singleTarget({ queue: values['work-queue'] ?? process.env.WORK_QUEUE ?? DEFAULTS.workQueue }, process.env, mode)),
          handler: await asUsage(() => loadHandler(values.handler as string)),
        };
  const { config } = target;
  process.stderr.write(overrideNote([target]));
  const handler = target.handler as NonNullable<typeof target.handler>;
  const event =
    mode !== 'event'
      ? undefined
      : values.sample
        ? sampleEvent(config.workQueue, vhostOfConfig(config), sampleMessages(values.body, sampleCount))
        : await asUsage(() => readEvent(values.event as string));
  const startedAt = Date.now();
  const deadline = startedAt + (budgetFlag ?? config.budgetMs);
  const context = { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => deadline - Date.now() };
  try {
    const summary =
      mode === 'pull' ? await createPullFunction(handler, { config })({}, context) : await createEventFunction(handler, { config })(event, context);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return 0;
  } catch (error) {
    // Failed before any message (the broker unreachable, the delay path missing): still a summary
    // line, saying why, as the last line on stdout.
    const summary = summaryOf(error, Date.now() - startedAt);
    const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
    process.stderr.write(`${name}: ${message}\n`);
    process.stdout.write(`${JSON.stringify({ ...summary, error: message, errorName: name })}\n`);
    return 1;
  }
}

/** The messages of `--sample`: `count` of the body given (UTF-8), else `{"sample":<n>}`, with ids `sample-<run>-<n>`. */
function sampleMessages(body: string | undefined, count: number): SampleMessage[] {
  const run = randomUUID().slice(0, 8);
  return Array.from({ length: count }, (_, n) => ({
    body: Buffer.from(body ?? JSON.stringify({ sample: n }), 'utf8'),
    messageId: `sample-${run}-${n}`,
    contentType: body === undefined ? 'application/json' : undefined,
  }));
}

async function readEvent(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`--event ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ConfigError(`--event ${path} is not valid JSON (${(error as Error).message})`);
  }
}

/** `boomerang invoke pull|event`. */
const invokeCommand: CliCommand = {
  name: 'invoke',
  summary: "run one invocation of a queue's pull or event function locally, as the cloud runs it",
  usage: USAGE,
  // The invocation is over when its summary is out: a handler still running past the hard stop (its
  // delivery already went back) must not keep the process alive, as Lambda would freeze it.
  exitWhenDone: true,
  run: main,
};

/**
 * Imports a handler module by path: its `handle` export, or its default export. The error says what
 * the module exports instead, so a typo in the export name is found at once.
 */
async function loadHandler(modulePath: string): Promise<Handler> {
  const absolute = resolve(modulePath);
  if (!existsSync(absolute)) throw new ConfigError(`--handler ${modulePath}: no such file (looked at ${absolute})`);
  const module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  const candidate = module.handle ?? module.default;
  if (typeof candidate !== 'function') {
    const exported = Object.keys(module).join(', ') || 'nothing';
    throw new ConfigError(`--handler ${modulePath} must export a function \`handle(message, context)\` or a default function; it exports: ${exported}`);
  }
  return candidate as Handler;
}

export { invokeCommand };
