// One import() of the bundle in argv, timed; prints the milliseconds and exits at once (test/bench/import-time.mjs).
import { pathToFileURL } from 'node:url';

const started = performance.now();
await import(pathToFileURL(process.argv[2]).href);
process.stdout.write(`${(performance.now() - started).toFixed(2)}\n`);
process.exit(0);
