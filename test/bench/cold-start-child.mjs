// A fresh process for one cold start: import() a function bundle, then invoke its handler once.
// argv: <bundle path> <pull|event> [the handler's export name, default handler]. Prints one JSON line: when the import started (wall clock, ms),
// when it finished, when the first client socket was made (the broker's connection: nothing opens one
// before it), and when the invocation returned. The parent's HTTP "partner" notes when the handler's
// first request arrives. Plain JavaScript, run by plain node: no loader in the way.
import { pathToFileURL } from 'node:url';
import { watchFirstSocket } from './first-socket.mjs';

const [bundle, kind, exportName = 'handler'] = process.argv.slice(2);
const wallNow = () => performance.timeOrigin + performance.now();
const startedAt = wallNow();
const socketAt = watchFirstSocket(wallNow);
const handler = (await import(pathToFileURL(bundle).href))[exportName];
const importedAt = wallNow();
const event = kind === 'event' ? JSON.parse(process.env.BENCH_EVENT ?? '{}') : {};
const deadline = Date.now() + 15_000;
let summary;
let error;
try {
  summary = await handler(event, { awsRequestId: 'bench-cold-start', getRemainingTimeInMillis: () => deadline - Date.now() });
} catch (e) {
  error = String(e?.message ?? e);
}
process.stdout.write(`${JSON.stringify({ startedAt, importedAt, socketAt: socketAt(), returnedAt: wallNow(), summary, error })}\n`);
