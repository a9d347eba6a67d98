import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { BoomerangStack } from './boomerang-stack.js';
import { stackConfigFromContext } from './stack-config.js';

type AppOptions = {
  /** CDK context, on top of what `cdk -c` and the environment give. */
  readonly context?: Readonly<Record<string, unknown>>;
  /** Where `app.synth()` writes the cloud assembly. @default CDK_OUTDIR (set by the cdk CLI), else cdk.out/ */
  readonly outdir?: string;
  /** The folder with the bundles. @default dist/ */
  readonly bundleDir?: string;
};

/**
 * The CDK app: one `BoomerangStack` (named by the `stackName` context, default `Boomerang`),
 * environment-agnostic (no account, no lookups) so that synth needs no AWS credentials, checked by
 * cdk-nag's AwsSolutions rules.
 * @example const { app, stack } = createApp({ context: { workQueue: 'orders' } }); app.synth();
 */
function createApp(options: AppOptions = {}): { readonly app: App; readonly stack: BoomerangStack } {
  const app = new App({ outdir: options.outdir, context: { ...options.context } });
  const context = (key: string): unknown => app.node.tryGetContext(key);
  const stackName = typeof context('stackName') === 'string' ? (context('stackName') as string) : 'Boomerang';
  const stack = new BoomerangStack(app, stackName, {
    config: stackConfigFromContext(context),
    bundleDir: options.bundleDir,
    description: 'Boomerang: stateless delayed retries for RabbitMQ (scheduled pull + Amazon MQ event source)',
  });
  // cdk-nag 3 runs as a policy validation plugin: synth fails on any finding not acknowledged with a reason.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}

export { createApp };
export type { AppOptions };
