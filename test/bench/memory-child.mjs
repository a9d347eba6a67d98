// One invocation of the pull function from the bench bundle of the public entry point (createPullFunction), with a handler that succeeds (success)
// or always throws (retry), configured from the environment like the deployed function. Prints one
// JSON line: the summary and the process's peak RSS (getrusage maxRSS, KiB).
import { pathToFileURL } from 'node:url';

const [bundle, mode] = process.argv.slice(2);
const { createPullFunction } = await import(pathToFileURL(bundle).href);
const handler = mode === 'retry' ? () => { throw new Error('partner down'); } : () => undefined;
const invoke = createPullFunction(handler);
const deadline = Date.now() + 600_000;
const summary = await invoke({}, { awsRequestId: 'bench-memory', getRemainingTimeInMillis: () => deadline - Date.now() });
process.stdout.write(`${JSON.stringify({ summary, maxRssKb: process.resourceUsage().maxRSS })}\n`);
