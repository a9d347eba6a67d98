/**
 * `npm run synth [-- -c key=value ...]`: synthesizes the CDK app into cdk.out/ (or CDK_OUTDIR when the cdk
 * CLI runs it: `npx cdk deploy --app "npx tsx infra/synth.ts"`); infra/synth-command.ts says how.
 */
import { synth } from './synth-command.js';

await synth(process.argv.slice(2));
