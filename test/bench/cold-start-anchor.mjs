// The cold-start anchor, in a fresh process: import() the anchor bundle (a hand-written amqplib
// consumer with the webhooks function's handler, test/bench/cold-start-anchor-entry.ts), then handle
// the first message of the work queue. argv: <anchor bundle> <queue>. Env: AMQP_URL. Prints one JSON
// line with when the import started and ended and when the first client socket (the broker's) was
// made (wall clock, ms); the parent's partner notes when the handler's request arrived.
import { pathToFileURL } from 'node:url';
import { watchFirstSocket } from './first-socket.mjs';

const [bundle, queue] = process.argv.slice(2);
const wallNow = () => performance.timeOrigin + performance.now();
const startedAt = wallNow();
const socketAt = watchFirstSocket(wallNow);
const { handleFirst } = await import(pathToFileURL(bundle).href);
const importedAt = wallNow();
let error;
try {
  await handleFirst(process.env.AMQP_URL, queue);
} catch (e) {
  error = String(e?.message ?? e);
}
process.stdout.write(`${JSON.stringify({ startedAt, importedAt, socketAt: socketAt(), returnedAt: wallNow(), error })}\n`);
