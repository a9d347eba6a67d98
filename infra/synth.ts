/**
 * `npm run synth [-- -c key=value ...]`: builds the bundles of every declared queue into dist/, then synthesizes the CDK app
 * into cdk.out/ (or CDK_OUTDIR when the cdk CLI runs it: `npx cdk deploy --app "npx tsx infra/synth.ts"`).
 * Works offline and without AWS credentials.
 */
import { join } from 'node:path';
import { parseCli, runCli } from '../shared/cli/args.js';
import { UsageError } from '../shared/errors.js';
import { addBoomerangStack, prepareApp } from './app.js';
import { loadDeclaredQueues } from '../shared/queues/declared-queues.js';
import { buildBundles, DEFAULT_OUTDIR, formatBundles, functionEntries } from '../shared/cdk/bundles.js';
import { CONTEXT_KEYS } from './context-keys.js';

const USAGE = `Usage: npm run synth [-- -c <key>=<value> ...] [--bundle-dir <dir>]

Deploys every queue declared in functions/ (each file exporting \`queue\` made by defineQueue; the folder
is BOOMERANG_FUNCTIONS_DIR when set): builds each function's bundle (<dir>/<queue>-<mode>, and
<dir>/<queue>-retention with deploy.retention; default dist/), then writes the CloudFormation template
of the Boomerang stack to cdk.out/ (CDK_OUTDIR when run by the cdk CLI). Each queue's functions,
schedules, event source mapping, log groups and alarms (parked-depth included) follow its deploy options. The context and the queues are checked first: an unknown key or a bad value exits
1 naming it. Stack-wide context keys: ${CONTEXT_KEYS.join(', ')}
(functionEnvironment is JSON). Deploy parameters: BrokerSecretArn, and BrokerHost (plus BrokerArn when
a queue deploys its event function) unless createBroker=true. A functionEnvironment variable that a
queue's file replaces is named on stderr with both values (note: ...); the functions log it too.`;

async function main(): Promise<number> {
  const { values, positionals } = parseCli(process.argv.slice(2), { context: { type: 'string', short: 'c', multiple: true }, 'bundle-dir': { type: 'string' } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const context: Record<string, string> = {};
  for (const pair of values.context ?? []) {
    const at = pair.indexOf('=');
    if (at < 1) throw new UsageError(`-c needs key=value; got ${JSON.stringify(pair)}`);
    context[pair.slice(0, at)] = pair.slice(at + 1);
  }
  // Bad context or a bad queue file fails here, in a second, before the build.
  const queues = await loadDeclaredQueues();
  const prepared = prepareApp({ queues, context, outdir: process.env.CDK_OUTDIR ?? join(process.cwd(), 'cdk.out') });
  // The deployed functions read functionEnvironment: a variable there that a queue's file replaces is said here, and at their cold start.
  for (const queue of prepared.config.queues) {
    for (const line of queue.overrides) process.stderr.write(`note: functionEnvironment: ${line}\n`);
  }
  const bundleDir = values['bundle-dir'] ?? DEFAULT_OUTDIR;
  // The template points at the bundles: build them first, so that synth never packages a stale or missing one.
  const bundles = await buildBundles({ entries: functionEntries(queues), outdir: bundleDir });
  process.stderr.write(`${formatBundles(bundles)}\n`);
  const stack = addBoomerangStack(prepared, bundleDir);
  const assembly = prepared.app.synth();
  // The cdk CLI prints these itself; this script has to.
  for (const { level, id, entry } of assembly.getStackArtifact(stack.artifactId).messages) {
    if (level === 'warning') process.stderr.write(`warning: ${String(entry.data)} (${id})\n`);
  }
  process.stderr.write(`template: ${join(assembly.directory, stack.templateFile)}\n`);
  return 0;
}

await runCli(USAGE, main);
