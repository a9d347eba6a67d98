/**
 * `npm run synth [-- -c key=value ...]`: builds the bundles into dist/, then synthesizes the CDK app
 * into cdk.out/ (or CDK_OUTDIR when the cdk CLI runs it: `npx cdk deploy --app "npx tsx infra/synth.ts"`).
 * Works offline and without AWS credentials.
 */
import { join } from 'node:path';
import { parseCli, runCli, UsageError } from '../shared/cli/args.js';
import { addBoomerangStack, prepareApp } from './app.js';
import { buildBundles, formatBundles } from './bundles.js';
import { CONTEXT_KEYS } from './context-keys.js';

const USAGE = `Usage: npm run synth [-- -c <key>=<value> ...]

Builds the function bundles (dist/), then writes the CloudFormation template of the Boomerang stack
to cdk.out/ (CDK_OUTDIR when run by the cdk CLI). The context is checked first: an unknown key or a bad
value exits 1 naming the key. Context keys: ${CONTEXT_KEYS.join(', ')}
(functionEnvironment is JSON). Deploy parameters: BrokerSecretArn, and BrokerHost (plus BrokerArn when
modes includes event) unless createBroker=true.`;

async function main(): Promise<number> {
  const { values, positionals } = parseCli(process.argv.slice(2), { context: { type: 'string', short: 'c', multiple: true } });
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
  // Bad context fails here, in a second, before the build.
  const prepared = prepareApp({ context, outdir: process.env.CDK_OUTDIR ?? join(process.cwd(), 'cdk.out') });
  // The template points at the bundles: build them first, so that synth never packages a stale or missing one.
  const bundles = await buildBundles();
  process.stderr.write(`${formatBundles(bundles)}\n`);
  const stack = addBoomerangStack(prepared);
  const assembly = prepared.app.synth();
  // The cdk CLI prints these itself; this script has to.
  for (const { level, id, entry } of assembly.getStackArtifact(stack.artifactId).messages) {
    if (level === 'warning') process.stderr.write(`warning: ${String(entry.data)} (${id})\n`);
  }
  process.stderr.write(`template: ${join(assembly.directory, stack.templateFile)}\n`);
  return 0;
}

await runCli(USAGE, main);
