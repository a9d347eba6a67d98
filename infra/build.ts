/**
 * `npm run build [-- --outdir <dir>]`: bundles each function into `<dir>/<name>/index.mjs` (default
 * `dist/`) and prints each bundle's size and what each dependency costs.
 */
import { parseCli, runCli } from '../shared/cli/args.js';
import { buildBundles, formatBundles } from './bundles.js';

const USAGE = `Usage: npm run build [-- --outdir <dir>]

Bundles functions/pull.ts and functions/event.ts with esbuild into <dir>/pull/index.mjs and
<dir>/event/index.mjs (default dir: dist/): ESM for Node 20, minified, source maps, @aws-sdk/* left to
the Lambda runtime. Prints each bundle's size (without the map) and what each dependency costs.
The bundles are judged by their cold start: npm run bench -- --section serverless.`;

async function main(): Promise<number> {
  const { values, positionals } = parseCli(process.argv.slice(2), { outdir: { type: 'string' } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const bundles = await buildBundles({ outdir: values.outdir });
  process.stdout.write(`${formatBundles(bundles)}\n`);
  return 0;
}

await runCli(USAGE, main);
