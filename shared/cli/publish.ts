import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import type { ConfirmChannel } from 'amqplib';
import { connectFromConfig } from '../amqp/connect-from-config.js';
import { DEFAULTS } from '../config/config.js';
import { ConfigError, UsageError } from '../errors.js';
import { createLogger, logLevelFrom } from '../observability/logger.js';
import { GuardedOutput } from '../observability/guarded-output.js';
import { asUsage, intFlag, parseCli } from './args.js';
import { type CliCommand, sameInThisRepository } from './command.js';
import { messageIdOf, pairs, PROPERTIES, propertiesOf, type PublishPlan, sharedOptions } from './publish-message.js';
import { overrideNote, singleTarget } from './queue-flags.js';

const USAGE = `Usage: boomerang publish [--function <name> | --work-queue <name>] (--body <text> | --body-file <file|->)
                         [--header name=value]... [--property name=value]... [--count <n>]

Sends test messages to a queue's work queue, on the broker in AMQP_URL (default
${DEFAULTS.amqpUrl.replace(/:[^:@/]*@/, ':***@')}), or the one AMQP_SECRET_ID describes: persistent, each confirmed by the
broker, refused when no queue of that name exists. The body is sent byte for byte as given.

  --function <name>         the declared queue whose work queue gets them; optional when one queue is declared
  --work-queue <name>       a work queue by its name instead (the environment configures the broker)
  --body <text>             the body, as UTF-8 text
  --body-file <file|->      the body, the file's bytes (- reads standard input)
  --header name=value       a header, as a text value (repeat for more)
  --property name=value     a property: ${Object.keys(PROPERTIES).join(', ')} (repeat for more).
                            Defaults: contentType application/json for a body that is JSON, and a
                            message id per message, <run id>-<n> (one given is used for every copy)
  --count <n>               send this many (default 1, at most 1000000), with progress on stderr
  -h, --help                this text

The last stdout line is a JSON summary: the queue, how many were confirmed, the message ids (the
first 10). Exit codes: 0 all confirmed, 1 the broker refused or returned some (the summary says how
many), 2 bad usage.
${sameInThisRepository('publish')}`;

/** Messages in flight before the command waits for their confirms: a bound on memory, not a pace. */
const CONFIRM_WINDOW = 500;
/** How many message ids the summary lists. */
const IDS_SHOWN = 10;

const stderr = GuardedOutput.of(process.stderr);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(argv, {
    function: { type: 'string' },
    'work-queue': { type: 'string' },
    body: { type: 'string' },
    'body-file': { type: 'string' },
    header: { type: 'string', multiple: true },
    property: { type: 'string', multiple: true },
    count: { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if ((values.body === undefined) === (values['body-file'] === undefined)) throw new UsageError('give the body once: --body <text> or --body-file <file|->');
  const plan: PublishPlan = {
    body: values.body === undefined ? await asUsage(() => readBody(values['body-file'] as string)) : Buffer.from(values.body, 'utf8'),
    headers: pairs('header', values.header ?? []),
    properties: propertiesOf(values.property ?? []),
    count: intFlag('count', values.count, 1, 1_000_000) ?? 1,
  };
  const target = await singleTarget({ function: values.function, queue: values['work-queue'] }, process.env, 'pull');
  process.stderr.write(overrideNote([target]));
  const { config } = target;
  const log = createLogger({ level: logLevelFrom(process.env.LOG_LEVEL) });
  const broker = await connectFromConfig(config, { connectionName: 'boomerang-publish', log });
  try {
    const channel = await broker.connection.createConfirmChannel();
    const outcome = await publishAll(channel, config.workQueue, plan);
    await channel.close().catch(() => undefined);
    process.stdout.write(`${JSON.stringify({ queue: config.workQueue, ...outcome })}\n`);
    if (outcome.returned > 0) stderr.write(`${outcome.returned} came back unroutable: is there a queue ${config.workQueue}? (boomerang topology apply)\n`);
    return outcome.confirmed === plan.count ? 0 : 1;
  } finally {
    await broker.close();
  }
}

/** What `publishAll` did: every message is one of confirmed, returned (no such queue) or refused (nacked). */
type PublishOutcome = { readonly confirmed: number; readonly returned: number; readonly refused: number; readonly messageIds: readonly string[] };

/**
 * Publishes the plan's messages to `queue` through the default exchange, mandatory, and waits for
 * every confirm. A message the broker returns (no queue by that name) is counted as returned, not
 * confirmed, though the broker then confirms it too.
 */
async function publishAll(channel: ConfirmChannel, queue: string, plan: PublishPlan): Promise<PublishOutcome> {
  const runId = randomUUID().slice(0, 8);
  const shared = sharedOptions(plan);
  // The broker sends a return before the message's confirm: all are in once the confirms are.
  let returned = 0;
  channel.on('return', () => returned++);
  let acked = 0;
  let refused = 0;
  const progressEvery = Math.max(CONFIRM_WINDOW, Math.floor(plan.count / 10));
  const ids: string[] = [];
  for (let i = 0; i < plan.count; i++) {
    const messageId = messageIdOf(plan, runId, i);
    if (ids.length < IDS_SHOWN) ids.push(messageId);
    channel.publish('', queue, plan.body, { ...shared, messageId, mandatory: true }, (error) => {
      if (error === null || error === undefined) acked++;
      else refused++;
    });
    if ((i + 1) % CONFIRM_WINDOW === 0) await channel.waitForConfirms().catch(() => undefined);
    if (plan.count > 1 && (i + 1) % progressEvery === 0) stderr.write(`published ${i + 1} of ${plan.count}\n`);
  }
  await channel.waitForConfirms().catch(() => undefined);
  return { confirmed: acked - returned, returned, refused, messageIds: ids };
}

async function readBody(file: string): Promise<Buffer> {
  try {
    return file === '-' ? await buffer(process.stdin) : await readFile(file);
  } catch (error) {
    throw new ConfigError(`--body-file ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

const publishCommand: CliCommand = {
  name: 'publish',
  summary: "send test messages to a queue's work queue: a body inline, from a file or stdin, headers, properties, a count; confirmed",
  usage: USAGE,
  run: main,
};

export { publishCommand };
