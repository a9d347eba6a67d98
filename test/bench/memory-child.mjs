// One invocation of the pull function from the bench bundle of the public entry point (createPullFunction), with a handler that succeeds (success)
// or always throws (retry), configured from the environment like the deployed function. Prints one
// JSON line: the summary, the process's own peak RSS (VmHWM of /proc/self/status, KiB) and getrusage
// maxRSS (KiB), which on Linux also counts what the process held before its exec (the parent's pages at
// the fork), so it is kept for the record only.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [bundle, mode] = process.argv.slice(2);
const { createPullFunction } = await import(pathToFileURL(bundle).href);
const handler =
  mode === 'retry'
    ? () => {
        throw new Error('partner down');
      }
    : () => undefined;
const invoke = createPullFunction(handler);
const deadline = Date.now() + 600_000;
const summary = await invoke({}, { awsRequestId: 'bench-memory', getRemainingTimeInMillis: () => deadline - Date.now() });
const vmHwmKb = Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
process.stdout.write(`${JSON.stringify({ summary, vmHwmKb, maxRssKb: process.resourceUsage().maxRSS })}\n`);
