/**
 * `npm run synth [-- -c key=value ...]`: builds the bundles into dist/, then synthesizes the CDK app
 * into cdk.out/ (or CDK_OUTDIR when the cdk CLI runs it: `npx cdk deploy --app "npx tsx infra/synth.ts"`).
 * Works offline and without AWS credentials.
 */
import { join } from 'node:path';
import { parseCli, runCli, UsageError } from '../shared/cli/args.js';
import { createApp } from './app.js';
import { buildBundles, formatBundles } from './bundles.js';

const USAGE = `Usage: npm run synth [-- -c <key>=<value> ...]

Builds the function bundles (dist/), then writes the CloudFormation template of the Boomerang stack
to cdk.out/ (CDK_OUTDIR when run by the cdk CLI). Context keys: stackName, workQueue, parkingQueue,
virtualHost, pullRateMinutes, pullReservedConcurrency, pullTimeoutSeconds, pullMemoryMb,
eventTimeoutSeconds, eventMemoryMb, eventBatchSize, eventBatchWindowSeconds, logRetentionDays,
alarmTopicArn, createBroker, brokerInstanceType, brokerEngineVersion, subnetIds, securityGroupIds,
functionEnvironment (JSON). Deploy parameters: BrokerSecretArn, and BrokerArn + BrokerHost unless
createBroker=true.`;

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
  // The template points at the bundles: build them first, so that synth never packages a stale or missing one.
  const bundles = await buildBundles();
  process.stderr.write(`${formatBundles(bundles)}\n`);
  const { app, stack } = createApp({ context, outdir: process.env.CDK_OUTDIR ?? join(process.cwd(), 'cdk.out') });
  const assembly = app.synth();
  process.stderr.write(`template: ${join(assembly.directory, stack.templateFile)}\n`);
  return 0;
}

await runCli(USAGE, main);
