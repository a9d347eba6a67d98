/**
 * A function's code as a CDK asset bundled at synth, the way `NodejsFunction` bundles (local bundling in
 * `Code.fromAsset`, hashed on its output), but with the bundles' own esbuild settings: code splitting into
 * chunks, which `NodejsFunction` cannot do (it writes one file), and which keeps the AWS SDK clients out
 * of a cold start (docs/deploy.md, "The bundles"). `cdk synth --exclusively`, and the context
 * `aws:cdk:bundling-stacks`, skip it as they skip any bundling.
 */
import { AssetHashType, type BundlingOptions, type ILocalBundling } from 'aws-cdk-lib';
import { Code, Runtime } from 'aws-cdk-lib/aws-lambda';
import type { Bundle } from './bundle-report.js';
import { type BundleEntry, bundleSync } from './bundles.js';

/**
 * Bundles one entry with esbuild, which is a dependency of this package: `tryBundle` bundles or throws,
 * and never hands over to Docker. Its fields are data, because CDK tells assets apart by the JSON of
 * their bundling options: two functions with the same fields would share one asset.
 */
class EsbuildBundling implements ILocalBundling {
  public constructor(
    public readonly entry: BundleEntry,
    /** The team's project, where esbuild resolves the queue file's imports from. */
    public readonly workingDir: string,
    private readonly bundled: (bundle: Bundle) => void,
  ) {}

  public tryBundle(outputDir: string, _options: BundlingOptions): boolean {
    this.bundled(bundleSync(this.entry, outputDir, this.workingDir));
    return true;
  }
}

/**
 * The code of one function: `entry` bundled into a folder that holds `index.mjs` (exporting `handler`),
 * its chunks, source maps and licence texts. `bundled` hears of each bundle built.
 * @example new Function(scope, 'Fn', { code: bundledCode(entry, process.cwd(), (b) => reports.push(b)), handler: 'index.handler', ... });
 */
function bundledCode(entry: BundleEntry, workingDir: string, bundled: (bundle: Bundle) => void): Code {
  return Code.fromAsset(workingDir, {
    // The asset is what esbuild wrote, not the project folder it started from.
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      local: new EsbuildBundling(entry, workingDir, bundled),
      // Required by the type; never pulled: local bundling always runs.
      image: Runtime.NODEJS_22_X.bundlingImage,
    },
  });
}

export { bundledCode };
