import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { BoomerangStack } from './boomerang-stack.js';
import { type StackConfig, stackConfigFromContext } from './stack-config.js';

type AppOptions = {
  /** CDK context, on top of what `cdk -c` and the environment give. */
  readonly context?: Readonly<Record<string, unknown>>;
  /** Where `app.synth()` writes the cloud assembly. @default CDK_OUTDIR (set by the cdk CLI), else cdk.out/ */
  readonly outdir?: string;
  /** The queue files' folder. @default BOOMERANG_FUNCTIONS_DIR, else functions/ in the working directory */
  readonly functionsDir?: string;
};

/** The app with its context read and checked, before the stack (which reads the queues and bundles them) is added. */
type PreparedApp = { readonly app: App; readonly stackName: string; readonly config: StackConfig };

/**
 * Creates the app and checks its whole context (`-c`, cdk.json, CDK_CONTEXT_JSON); throws `ConfigError`
 * naming the first bad key. Cheap: `npm run synth` calls it before anything is read or built.
 */
function prepareApp(options: Omit<AppOptions, 'functionsDir'>): PreparedApp {
  const app = new App({ outdir: options.outdir, context: { ...options.context } });
  const context = app.node.getAllContext();
  const stackName = typeof context.stackName === 'string' ? context.stackName : 'Boomerang';
  return { app, stackName, config: stackConfigFromContext(context) };
}

/** Adds the Boomerang stack, checked by cdk-nag's AwsSolutions rules, to a prepared app. */
function addBoomerangStack(prepared: PreparedApp, functionsDir?: string): BoomerangStack {
  const { app, stackName, config } = prepared;
  const stack = new BoomerangStack(app, stackName, { config, functionsDir });
  // cdk-nag 3 runs as a policy validation plugin: synth fails on any finding not acknowledged with a reason.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}

/**
 * The CDK app: one `BoomerangStack` (named by the `stackName` context, default `Boomerang`) with every
 * queue declared in the functions folder, environment-agnostic (no account, no lookups) so that synth
 * needs no AWS credentials.
 * @example const { app, stack } = createApp({ context: { stackName: 'Orders' } }); app.synth();
 */
function createApp(options: AppOptions = {}): { readonly app: App; readonly stack: BoomerangStack } {
  const prepared = prepareApp(options);
  return { app: prepared.app, stack: addBoomerangStack(prepared, options.functionsDir) };
}

export { addBoomerangStack, createApp, prepareApp };
export type { AppOptions, PreparedApp };
