/**
 * `npm run synth [-- -c key=value ...]`: synthesizes the CDK app into cdk.out/ (or CDK_OUTDIR when the cdk
 * CLI runs it: `npx cdk deploy --app "npx tsx infra/synth.ts"`); the construct bundles each function
 * into the cloud assembly as it goes. Works offline and without AWS credentials. synth.ts runs it.
 */
import { join } from 'node:path';
import { formatBundles } from '../shared/cdk/bundle-report.js';
import { parseCli, runCli } from '../shared/cli/args.js';
import { UsageError } from '../shared/errors.js';
import { addBoomerangStack, prepareApp } from './app.js';
import { CONTEXT_KEYS } from './context-keys.js';

const USAGE = `Usage: npm run synth [-- -c <key>=<value> ...]

Deploys every queue declared in functions/ (each file exporting \`queue\` made by defineQueue; the folder
is BOOMERANG_FUNCTIONS_DIR when set) with the BoomerangQueues construct: writes the CloudFormation
template of the Boomerang stack to cdk.out/ (CDK_OUTDIR when run by the cdk CLI), with each function's
bundle (esbuild, as npm run build makes them) as an asset beside it, and prints each bundle's size.
Each queue's functions, schedules, event source mapping, log groups and alarms (parked-depth included)
follow its deploy options. The context is checked first, then the queues: an unknown key, a bad value
or a bad queue file exits 1 naming it, before anything is bundled. Stack-wide context keys:
${CONTEXT_KEYS.join(', ')} (functionEnvironment is JSON). Deploy parameters: BrokerSecretArn, and
BrokerHost (plus BrokerArn when a queue deploys its event function) unless createBroker=true. A
functionEnvironment variable that a queue's file replaces is named on stderr with both values
(note: ...); the functions log it too.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(argv, { context: { type: 'string', short: 'c', multiple: true } });
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
  // Bad context fails here, in a second; a bad queue file when the stack reads the queues, before any bundle.
  const prepared = prepareApp({ context, outdir: process.env.CDK_OUTDIR ?? join(process.cwd(), 'cdk.out') });
  const stack = addBoomerangStack(prepared);
  if (stack.queues.bundles.length > 0) process.stderr.write(`${formatBundles(stack.queues.bundles)}\n`);
  const assembly = prepared.app.synth();
  // The cdk CLI prints these itself; this script has to.
  for (const { level, id, entry } of assembly.getStackArtifact(stack.artifactId).messages) {
    if (level === 'info') process.stderr.write(`note: ${String(entry.data)}\n`);
    if (level === 'warning') process.stderr.write(`warning: ${String(entry.data)} (${id})\n`);
  }
  process.stderr.write(`template: ${join(assembly.directory, stack.templateFile)}\n`);
  return 0;
}

/**
 * Runs `npm run synth -- <argv>`: bad usage exits 2 with the usage, a failure 1 with its name and
 * message; the exit code is left in process.exitCode.
 */
function synth(argv: string[]): Promise<void> {
  return runCli(USAGE, () => main(argv));
}

export { synth };
