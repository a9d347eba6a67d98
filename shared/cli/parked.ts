import { loadConfig } from '../config/config.js';
import type { WalkResult } from '../parked/context.js';
import { FILTER_OPTIONS, filterFromFlags } from '../parked/filter-flags.js';
import { describeFilter } from '../parked/filters.js';
import { groupsReport, groupsTable } from '../parked/groups.js';
import { askYes } from '../parked/session.js';
import { parseRatePerSecond } from '../parked/token-bucket.js';
import { loadDeclaredQueues, pickQueue } from '../queues/declared-queues.js';
import { asEnvInt, asUsage, intFlag, parseCli } from './args.js';
import type { CliCommand } from './command.js';
import { lambdaInvoker } from './lambda-invoker.js';
import { directLot, type ParkedLot } from './parked-lot.js';
import { remoteLot } from './remote-lot.js';
import { GROUPS_USAGE, LIST_USAGE, parkedUsageFor, PURGE_USAGE, REPLAY_USAGE, SHOW_USAGE, USAGE } from './parked-usage.js';
import { UsageError } from '../errors.js';
import { GuardedOutput } from '../observability/guarded-output.js';

const COMMON = { function: { type: 'string' }, 'parking-queue': { type: 'string' }, remote: { type: 'string' } } as const;
/** `--queue` named the parking queue here but the work queue in the other commands. */
const RENAMED = { queue: 'parking-queue' } as const;

const stdout = GuardedOutput.of(process.stdout);
const stderr = GuardedOutput.of(process.stderr);
const say = (line: string): void => stdout.write(`${line}\n`);
const note = (line: string): void => stderr.write(`${line}\n`);

/**
 * The lot a command acts on, as the other commands choose their queue: the declared queue `--function`
 * names (its file's options, then the environment); without it, the only declared queue, unless
 * WORK_QUEUE or PARKING_QUEUE says otherwise (several declared: the error names them and the flag);
 * `--parking-queue` names a parking queue itself. With `--remote`, the operator function of that name
 * or ARN resolves them and runs the command in the broker's network.
 */
async function setUp(values: { function?: string; 'parking-queue'?: string; remote?: string }, positionals: string[], allowed = 0): Promise<ParkedLot> {
  if (positionals.length > allowed) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[allowed])}`);
  const name = values.function;
  if (name !== undefined && values['parking-queue'] !== undefined) {
    throw new UsageError(
      `--parking-queue and --function go separately: --function ${name} reads the parking lot its file configures; --parking-queue names a parking queue yourself`,
    );
  }
  if (values.remote !== undefined) {
    const env = process.env;
    return remoteLot(
      lambdaInvoker(values.remote),
      { function: name, parkingQueue: values['parking-queue'] },
      {
        name: values.remote,
        // Tuning (and the tests' small pages); the defaults fit Lambda's limits.
        pageBytes: asEnvInt('BOOMERANG_REMOTE_PAGE_BYTES', env.BOOMERANG_REMOTE_PAGE_BYTES),
        sliceMs: asEnvInt('BOOMERANG_REMOTE_SLICE_MS', env.BOOMERANG_REMOTE_SLICE_MS),
      },
    );
  }
  const config = await asUsage(async () => {
    if (name !== undefined) return pickQueue(await loadDeclaredQueues(), name).loadConfig(process.env, 'pull');
    const fromEnv = values['parking-queue'] !== undefined || process.env.WORK_QUEUE !== undefined || process.env.PARKING_QUEUE !== undefined;
    const declared = fromEnv ? [] : await loadDeclaredQueues();
    const [only] = declared;
    if (declared.length > 1)
      throw new UsageError(`say which parking lot: --function <name>; the declared queues are ${declared.map((q) => q.name).join(', ')}`);
    return only === undefined ? loadConfig() : only.loadConfig(process.env, 'pull');
  });
  return directLot(config, values['parking-queue'] ?? config.parkingQueue);
}

/** What the walk's ending means for the reader, on stderr. */
function explainEnding(result: WalkResult): void {
  if (result.ending === 'aborted')
    note(
      `stopped after ${result.visited} of ${result.total}: the ${result.kept} read went back unchanged (nothing lost; on a RabbitMQ 3.x quorum queue they are now behind the others)`,
    );
  if (result.ending === 'queue-shrank') note(`the queue held fewer messages than the ${result.total} counted at the start: did something else consume it?`);
}

async function list(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(argv, { ...COMMON, ...FILTER_OPTIONS, json: { type: 'boolean' }, limit: { type: 'string' } }, RENAMED);
  if (values.help) return help(LIST_USAGE);
  const filter = filterFromFlags(values);
  const limit = intFlag('limit', values.limit, 1);
  const lot = await setUp(values, positionals);
  const { queue } = lot;
  const result = await lot.list({ filter, json: values.json ?? false, limit });
  if (result.matched === 0) note(`no parked message in ${queue} matches (${describeFilter(filter)})`);
  if (limit !== undefined && result.matched > limit) note(`${result.matched - limit} more matching messages not shown (--limit ${limit})`);
  explainEnding(result);
  return 0;
}

async function groups(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(argv, { ...COMMON, ...FILTER_OPTIONS, json: { type: 'boolean' } }, RENAMED);
  if (values.help) return help(GROUPS_USAGE);
  const filter = filterFromFlags(values);
  const lot = await setUp(values, positionals);
  const { queue } = lot;
  const result = await lot.groups(filter);
  const report = groupsReport(queue, result);
  if (values.json) say(JSON.stringify(report));
  else if (report.groups.length > 0) say(groupsTable(report));
  if (report.grouped === 0) note(`no parked message in ${queue} matches (${describeFilter(filter)})`);
  explainEnding(result);
  return 0;
}

async function show(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(argv, { ...COMMON, json: { type: 'boolean' }, 'body-chars': { type: 'string' } }, RENAMED);
  if (values.help) return help(SHOW_USAGE);
  const [messageId] = positionals;
  if (messageId === undefined) throw new UsageError('say which message to show: show <messageId>');
  const maxBodyChars = intFlag('body-chars', values['body-chars'], 0, 10_000_000);
  const lot = await setUp(values, positionals, 1);
  const { queue } = lot;
  const result = await lot.show({ messageId, json: values.json ?? false, maxBodyChars });
  explainEnding(result);
  if (result.found > 0) return 0;
  note(`no parked message in ${queue} has the id ${JSON.stringify(messageId)}`);
  return 1;
}

async function replay(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(
    argv,
    {
      ...COMMON,
      ...FILTER_OPTIONS,
      to: { type: 'string' },
      'keep-count': { type: 'boolean' },
      limit: { type: 'string' },
      rate: { type: 'string' },
      'dry-run': { type: 'boolean' },
    },
    RENAMED,
  );
  if (values.help) return help(REPLAY_USAGE);
  const filter = filterFromFlags(values);
  const limit = intFlag('limit', values.limit, 1);
  const ratePerSecond = values.rate === undefined ? undefined : parseRatePerSecond(values.rate);
  if (values.rate !== undefined && ratePerSecond === undefined)
    throw new UsageError(`--rate must be a positive number of messages, such as 50, 50/s or 300/m; got ${JSON.stringify(values.rate)}`);
  if (values.to === '') throw new UsageError('--to needs a queue name');
  const lot = await setUp(values, positionals);
  const { queue } = lot;
  const dryRun = values['dry-run'] ?? false;
  const options = { filter, to: values.to, keepCount: values['keep-count'] ?? false, limit, ratePerSecond };
  if (!dryRun) {
    // Where each group goes, said before anything is sent (a read that leaves the lot as it was).
    const plan = await lot.replay({ ...options, dryRun: true });
    for (const [target, count] of plan.byQueue) say(`will replay ${count} to ${target}`);
  }
  const result = await lot.replay({ ...options, dryRun });
  for (const [target, count] of result.byQueue) say(`${dryRun ? 'would replay' : 'replayed'} ${count} to ${target}`);
  for (const refusal of result.refused)
    note(`${JSON.stringify(refusal.messageId ?? '(no id)')} stayed parked: ${refusal.reason}; replay it with --to <queue> if that is where it belongs`);
  if (result.selected === 0) note(`no parked message in ${queue} matches (${describeFilter(filter)})`);
  for (const [target, count] of result.unroutable) note(`${count} stayed parked: there is no queue ${JSON.stringify(target)} (create it, or use --to)`);
  if (result.noSource > 0) note(`${result.noSource} stayed parked: no boomerang-source-queue header says where they came from (use --to <queue>)`);
  for (const left of result.unsendable)
    note(`${JSON.stringify(left.messageId ?? '(no id)')} stayed parked: ${left.reason}; move it with a shovel or a client without that limit, or purge it`);
  explainEnding(result);
  return result.unroutable.size > 0 || result.noSource > 0 || result.refused.length > 0 || result.unsendable.length > 0 ? 1 : 0;
}

async function purge(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(
    argv,
    { ...COMMON, ...FILTER_OPTIONS, limit: { type: 'string' }, 'dry-run': { type: 'boolean' }, yes: { type: 'boolean' } },
    RENAMED,
  );
  if (values.help) return help(PURGE_USAGE);
  const filter = filterFromFlags(values);
  const limit = intFlag('limit', values.limit, 1);
  const lot = await setUp(values, positionals);
  const { queue } = lot;
  const dryRun = values['dry-run'] ?? false;
  if (!dryRun && !values.yes) {
    if (!process.stdin.isTTY) throw new UsageError('purge deletes messages: pass --yes (stdin is not a terminal, so there is no one to ask)');
    // Counted by a dry run first (a read that leaves the lot as it was), so the question says how many.
    const counted = await lot.purge({ filter, limit, dryRun: true });
    if (counted.selected === 0) {
      note(`no parked message in ${queue} matches (${describeFilter(filter)}): nothing to delete`);
      return 0;
    }
    if (!(await askYes(`${purgeQuestion(counted.selected, counted.total, queue, describeFilter(filter))} This cannot be undone. [y/N] `))) {
      note('nothing deleted');
      return 1;
    }
  }
  const result = await lot.purge({ filter, limit, dryRun });
  say(dryRun ? `would delete ${result.selected}` : `deleted ${result.deleted}`);
  explainEnding(result);
  return 0;
}

/** What purge asks: `Delete 12 of the 300 parked messages in orders.parked (error is PartnerDown)?` */
function purgeQuestion(selected: number, total: number, queue: string, filter: string): string {
  const which = selected === total ? `all ${total}` : `${selected} of the ${total}`;
  return `Delete ${which} parked message${total === 1 ? '' : 's'} in ${queue} (${filter})?`;
}

function help(usage: string): number {
  say(usage);
  return 0;
}

const COMMANDS: Readonly<Record<string, (argv: string[]) => Promise<number>>> = { list, groups, show, replay, purge };

async function main([command, ...argv]: string[]): Promise<number> {
  if (command === '--help' || command === '-h' || command === 'help') return help(USAGE);
  if (command === undefined) throw new UsageError('say which command to run: list, groups, show, replay or purge');
  const run = COMMANDS[command];
  if (run === undefined) throw new UsageError(`unknown command ${JSON.stringify(command)}; expected list, groups, show, replay or purge`);
  // A walk stopped half-way leaves a 3.x quorum lot rotated (what it held goes back behind the rest).
  stdout.onClose(() => note('stdout was closed: reading on to the end without printing, so the parking lot keeps its order (Ctrl-C stops at once)'));
  return run(argv);
}

/** `boomerang parked list|groups|show|replay|purge`. */
const parkedCommand: CliCommand = {
  name: 'parked',
  summary: 'the parking lot: list, group, show, replay or purge parked messages',
  usage: USAGE,
  usageFor: parkedUsageFor,
  run: main,
};

export { parkedCommand };
