// The cold-start anchor: the least a hand-written consumer does for the same first message, in a
// fresh process. import() amqplib (from node_modules), connect, consume the work queue, POST the
// webhook the message describes, ack. argv: <queue>. Env: AMQP_URL. Prints one JSON line with
// when the import started (wall clock, ms); the parent's partner notes when the request arrived.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [queue] = process.argv.slice(2);
const wallNow = () => performance.timeOrigin + performance.now();
const startedAt = wallNow();
const amqplibPath = createRequire(import.meta.url).resolve('amqplib');
const amqp = await import(pathToFileURL(amqplibPath).href);
const importedAt = wallNow();
const connection = await amqp.connect(process.env.AMQP_URL, { noDelay: true });
const channel = await connection.createChannel();
await channel.prefetch(100);
let tag;
await new Promise((resolve, reject) => {
  channel
    .consume(queue, async (message) => {
      const { url, body } = JSON.parse(message.content.toString());
      await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      channel.ack(message);
      resolve();
    })
    .then((ok) => (tag = ok.consumerTag), reject);
});
await channel.cancel(tag);
await connection.close();
process.stdout.write(`${JSON.stringify({ startedAt, importedAt, returnedAt: wallNow() })}\n`);
