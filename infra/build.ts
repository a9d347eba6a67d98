/**
 * `npm run build [-- --outdir <dir>]`: bundles each deployed function of each declared queue into
 * `<dir>/<queue>-<mode>/index.mjs` (default `dist/`) and prints each bundle's size and what each
 * dependency costs.
 */
import { asUsage, parseCli, runCli } from '../shared/cli/args.js';
import { loadDeclaredQueues } from '../shared/queues/declared-queues.js';
import { formatBundles } from '../shared/cdk/bundle-report.js';
import { buildBundles, defaultOutdir, functionEntries } from '../shared/cdk/bundles.js';

const USAGE = `Usage: npm run build [-- --outdir <dir>]

Bundles each declared queue (every functions/*.ts exporting \`queue\` made by defineQueue; the folder is
BOOMERANG_FUNCTIONS_DIR when set) with esbuild: one bundle per mode it deploys, <dir>/<queue>-<mode>/index.mjs
exporting that mode's function as \`handler\` (default dir: dist/). ESM for Node 20, minified, source
maps, @aws-sdk/* left to the Lambda runtime. Prints each bundle's size (without the map) and what each dependency costs.
npm run synth bundles the same way, into the cloud assembly (it needs no dist/). The bundles are judged
by their cold start: npm run bench -- --section serverless.`;

async function main(): Promise<number> {
  const { values, positionals } = parseCli(process.argv.slice(2), { outdir: { type: 'string' } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const queues = await asUsage(() => loadDeclaredQueues());
  const outdir = values.outdir ?? defaultOutdir();
  const bundles = await buildBundles({ entries: functionEntries(queues), outdir });
  process.stdout.write(`bundles in ${outdir}/<name>/index.mjs:\n${formatBundles(bundles)}\n`);
  return 0;
}

await runCli(USAGE, main);
