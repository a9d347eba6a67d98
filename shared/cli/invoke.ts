import { randomUUID } from 'node:crypto';
import { createPullFunction } from '../../functions/pull.js';
import { handle as deliverWebhook } from '../../functions/webhook-delivery.js';
import { DEFAULTS, loadConfig } from '../config.js';
import { loadHandler } from '../load-handler.js';
import { PullAbortedError } from '../pull.js';
import { intFlag, parseCli, runCli, UsageError } from './args.js';

const USAGE = `Usage: npm run invoke -- pull [--handler <module>] [--queue <name>] [--budget-ms <n>]

Runs one invocation of the scheduled pull function locally, as the cloud would run it, against the
broker in AMQP_URL (default ${DEFAULTS.amqpUrl.replace(/:[^:@/]*@/, ':***@')}).

  --handler <module>   a module exporting handle(message, context) or a default function
                       (default: the webhook delivery handler)
  --queue <name>       the work queue (default: WORK_QUEUE, else ${DEFAULTS.workQueue})
  --budget-ms <n>      the invocation's time budget (default: BUDGET_MS, else ${DEFAULTS.budgetMs})
  -h, --help           this text

Logs go to stderr as JSON lines; the last stdout line is the summary as one JSON object.
Exit codes: 0 done, 1 the invocation failed (the summary says how far it got), 2 bad usage.
The topology must exist first: npm run topology -- apply`;

async function main(): Promise<number> {
  const { values, positionals } = parseCli(process.argv.slice(2), {
    handler: { type: 'string' },
    queue: { type: 'string' },
    'budget-ms': { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [mode, ...extra] = positionals;
  if (mode !== 'pull') throw new UsageError(mode === undefined ? 'say which function to invoke: pull' : `unknown function ${JSON.stringify(mode)}; expected pull`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  const config = loadConfig(values.queue === undefined ? process.env : { ...process.env, WORK_QUEUE: values.queue });
  const budgetMs = intFlag('budget-ms', values['budget-ms'], 100) ?? config.budgetMs;
  const handler = values.handler === undefined ? deliverWebhook : await loadHandler(values.handler);
  const deadline = Date.now() + budgetMs;
  const invoke = createPullFunction(handler, { config });
  try {
    const summary = await invoke({}, { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => deadline - Date.now() });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof PullAbortedError) {
      process.stderr.write(`${error.name}: ${error.message}\n`);
      process.stdout.write(`${JSON.stringify({ ...error.summary, error: error.message })}\n`);
      return 1;
    }
    throw error;
  }
}

await runCli(USAGE, main);
