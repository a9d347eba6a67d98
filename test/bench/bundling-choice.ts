/**
 * Why the construct bundles its functions itself instead of with NodejsFunction: the webhooks pull
 * function (functions/webhooks.ts, export `pull`) bundled both ways by a real CDK synth, then each
 * bundle's cold start timed as the serverless section times the others (a fresh node process imports it
 * and handles one message), the variants taking turns within each run. NodejsFunction writes one file
 * (esbuild refuses --splitting without --outdir), so esbuild hoists the static imports of the AWS SDK
 * clients out of the chunks the construct loads lazily: with `@aws-sdk/*` external, NodejsFunction's
 * default, every cold start loads them from the runtime's copy; bundled in, they weigh on the import.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { App, Stack } from 'aws-cdk-lib';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { BoomerangQueues } from '../../shared/cdk/index.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';
import type { BenchBroker } from './bench-broker.js';
import { type ColdStart, publishOne, timeColdStart } from './cold-start.js';
import { fmt, pct, type Row } from './report.js';
import { median } from './stats.js';

/**
 * Inside the repository, so that an external `@aws-sdk/*` import resolves to node_modules as it does
 * to the runtime's copy in Lambda.
 */
const OUTDIR = join(REPO_ROOT, 'dist', 'bench', 'bundling-choice');

const WEBHOOKS = join(REPO_ROOT, 'functions', 'webhooks.ts');

/** NodejsFunction as a team would set it up for an ES module on Node 20 (AWS's own recipe for ESM, minified, with a source map). */
const TEAM_BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: 'node20',
  minify: true,
  sourceMap: true,
  mainFields: ['module', 'main'],
  // CommonJS dependencies call require, which an ES module lacks.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  // Quiet in the bench's output; it changes nothing in the bundle.
  logLevel: LogLevel.WARNING,
};

const VARIANTS = {
  construct: 'BoomerangQueues (esbuild, code split into chunks, @aws-sdk/* external)',
  nodejsFunction: 'NodejsFunction (one file, @aws-sdk/* external: its default on Node 18+)',
  nodejsFunctionSdkIn: 'NodejsFunction (one file, the AWS SDK bundled in: externalModules [])',
} as const;

type Variant = keyof typeof VARIANTS;

type VariantResult = {
  readonly bundle: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly firstHandledMs: number[];
  readonly importMs: number[];
};

type BundlingChoice = Readonly<Record<Variant, VariantResult>>;

type ChoiceOptions = {
  readonly broker: BenchBroker;
  readonly runs: number;
  readonly progress: (line: string) => void;
  /** The webhooks work queue, its topology applied and empty. */
  readonly workQueue: string;
  /** The cold starts' environment (serverless.ts, `coldStartEnv`). */
  readonly env: Record<string, string>;
  readonly partner: { readonly url: string; readonly arrivals: number[] };
};

/** Synthesizes one stack with the three bundles of the webhooks pull function; resolves each `index.mjs` and the export to call. */
function synthesizeVariants(): Record<Variant, { readonly file: string; readonly exportName: string }> {
  rmSync(OUTDIR, { recursive: true, force: true });
  const app = new App({ outdir: OUTDIR });
  const stack = new Stack(app, 'BundlingChoice');
  new BoomerangQueues(stack, 'Default', {
    files: [WEBHOOKS],
    brokerSecret: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:bench-AbCdEf',
    brokerHost: 'bench.invalid',
    brokerArn: 'arn:aws:mq:eu-west-1:123456789012:broker:bench:b-0',
  });
  new NodejsFunction(stack, 'NodejsFunction', { entry: WEBHOOKS, handler: 'pull', runtime: Runtime.NODEJS_22_X, bundling: TEAM_BUNDLING });
  new NodejsFunction(stack, 'NodejsFunctionSdkIn', {
    entry: WEBHOOKS,
    handler: 'pull',
    runtime: Runtime.NODEJS_22_X,
    bundling: { ...TEAM_BUNDLING, externalModules: [] },
  });
  const assembly = app.synth();
  const template = JSON.parse(readFileSync(join(assembly.directory, stack.templateFile), 'utf8')) as {
    Resources: Record<string, { Type: string; Properties: { Code?: { S3Key?: string } } }>;
  };
  const asset = (logicalIdPrefix: string): string => {
    const [, fn] = Object.entries(template.Resources).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(logicalIdPrefix)) ?? [];
    if (fn?.Properties.Code?.S3Key === undefined) throw new Error(`the bench stack has no function ${logicalIdPrefix}`);
    return join(assembly.directory, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs');
  };
  return {
    construct: { file: asset('WebhooksPullFunction'), exportName: 'handler' },
    nodejsFunction: { file: asset('NodejsFunction'), exportName: 'pull' },
    nodejsFunctionSdkIn: { file: asset('NodejsFunctionSdkIn'), exportName: 'pull' },
  };
}

async function bundlingChoice(options: ChoiceOptions): Promise<{ result: BundlingChoice; rows: Row[] }> {
  options.progress('  bundling the webhooks pull function with BoomerangQueues and with NodejsFunction (a CDK synth)');
  const bundles = synthesizeVariants();
  const samples: Record<Variant, ColdStart[]> = { construct: [], nodejsFunction: [], nodejsFunctionSdkIn: [] };
  const order = Object.keys(VARIANTS) as Variant[];
  for (let run = 0; run < options.runs; run++) {
    // Each variant goes first in turn: a noisy moment weighs on all of them alike.
    for (const variant of [...order.slice(run % order.length), ...order.slice(0, run % order.length)]) {
      const { file, exportName } = bundles[variant];
      await publishOne(options.broker, options.workQueue, JSON.stringify({ url: options.partner.url, body: { run } }), `cold-${variant}-${run}`);
      samples[variant].push(
        await timeColdStart([join(REPO_ROOT, 'test/bench/cold-start-child.mjs'), file, 'pull', exportName], options.env, options.partner, `${variant} bundle`),
      );
    }
  }
  const result = Object.fromEntries(
    order.map((variant) => {
      const content = readFileSync(bundles[variant].file);
      return [
        variant,
        {
          bundle: bundles[variant].file,
          bytes: content.length,
          gzipBytes: gzipSync(content).length,
          firstHandledMs: samples[variant].map((s) => s.firstHandledMs),
          importMs: samples[variant].map((s) => s.importMs),
        },
      ];
    }),
  ) as unknown as BundlingChoice;
  for (const variant of order)
    options.progress(
      `  ${variant}: import ${fmt(median(result[variant].importMs))} ms, first handled message ${fmt(median(result[variant].firstHandledMs))} ms (medians of ${options.runs})`,
    );
  return { result, rows: choiceRows(result) };
}

/** Two rows per NodejsFunction variant, the construct's bundle against it: the import alone, and the first handled message. */
function choiceRows(result: BundlingChoice): Row[] {
  const own = result.construct;
  const size = (r: VariantResult) => `index.mjs ${fmt(r.bytes / 1000, 1)} kB, ${fmt(r.gzipBytes / 1000, 1)} kB gzipped`;
  const ms = (values: readonly number[]) => `${fmt(median(values))} ms (range ${fmt(Math.min(...values))}-${fmt(Math.max(...values))} ms)`;
  return (['nodejsFunction', 'nodejsFunctionSdkIn'] as const).flatMap((variant) => {
    const other = result[variant];
    return [
      { key: 'importMs', what: 'import() of the bundle in a fresh node process' },
      { key: 'firstHandledMs', what: 'import() → first handled message' },
    ].map(({ key, what }) => {
      const mine = own[key as 'importMs'];
      const theirs = other[key as 'importMs'];
      return {
        section: 'serverless cost, bundling',
        metric: `webhooks pull, ${what} (median of ${mine.length}): ${VARIANTS.construct} against ${VARIANTS[variant]}`,
        boomerang: `${ms(mine)}; ${size(own)}`,
        anchor: `${ms(theirs)}; ${size(other)}`,
        ratio: pct(median(mine) / median(theirs)),
        target: '≤ 100 %',
        verdict: median(mine) <= median(theirs) ? 'meets' : 'misses',
      } satisfies Row;
    });
  });
}

export { bundlingChoice, VARIANTS };
export type { BundlingChoice, Variant };
