import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { BoomerangStack } from './boomerang-stack.js';
import type { DeclaredQueue } from '../shared/queues/declared-queues.js';
import { type StackConfig, stackConfigFromContext } from './stack-config.js';

type AppOptions = {
  /** The queues to deploy: `await loadDeclaredQueues()`, every queue declared in functions/. */
  readonly queues: readonly DeclaredQueue[];
  /** CDK context, on top of what `cdk -c` and the environment give. */
  readonly context?: Readonly<Record<string, unknown>>;
  /** Where `app.synth()` writes the cloud assembly. @default CDK_OUTDIR (set by the cdk CLI), else cdk.out/ */
  readonly outdir?: string;
  /** The folder with the bundles. @default dist/ */
  readonly bundleDir?: string;
};

/** The app with its context read and checked, before the stack (which packages the bundles) is added. */
type PreparedApp = { readonly app: App; readonly stackName: string; readonly config: StackConfig };

/**
 * Creates the app and checks its whole context (`-c`, cdk.json, CDK_CONTEXT_JSON) and the queues; throws
 * `ConfigError` naming the first bad key. Cheap: `npm run synth` calls it before building the bundles.
 */
function prepareApp(options: Omit<AppOptions, 'bundleDir'>): PreparedApp {
  const app = new App({ outdir: options.outdir, context: { ...options.context } });
  const context = app.node.getAllContext();
  const stackName = typeof context.stackName === 'string' ? context.stackName : 'Boomerang';
  return { app, stackName, config: stackConfigFromContext(context, options.queues) };
}

/** Adds the Boomerang stack, checked by cdk-nag's AwsSolutions rules, to a prepared app. */
function addBoomerangStack(prepared: PreparedApp, bundleDir?: string): BoomerangStack {
  const { app, stackName, config } = prepared;
  const stack = new BoomerangStack(app, stackName, {
    config,
    bundleDir,
    description: `Boomerang: stateless delayed retries for RabbitMQ (${config.queues.map((q) => q.name).join(', ')})`,
  });
  // cdk-nag 3 runs as a policy validation plugin: synth fails on any finding not acknowledged with a reason.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}

/**
 * The CDK app: one `BoomerangStack` (named by the `stackName` context, default `Boomerang`) with every
 * given queue, environment-agnostic (no account, no lookups) so that synth needs no AWS credentials.
 * @example const { app, stack } = createApp({ queues: await loadDeclaredQueues(), context: { stackName: 'Orders' } }); app.synth();
 */
function createApp(options: AppOptions): { readonly app: App; readonly stack: BoomerangStack } {
  const prepared = prepareApp(options);
  return { app: prepared.app, stack: addBoomerangStack(prepared, options.bundleDir) };
}

export { addBoomerangStack, createApp, prepareApp };
export type { AppOptions, PreparedApp };
