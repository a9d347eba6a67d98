// One timed throughput run, in a fresh plain-node process (no loader, no source maps: as Lambda runs
// the bundle). argv[2] is a JSON object:
//   { who: 'boomerang' | 'raw' | 'rhea' | 'rhea-checked' | 'rascal', mode: 'success' | 'retry' | 'io', url, queue, messages, prefetch,
//     concurrency, delayQueue, delayQueueArguments, delayMs, module }
// Boomerang is the pull function from `module` (dist/bench/boomerang/index.mjs: createPullFunction of the
// public entry point, bundled like the Lambda bundles), configured from the environment
// as the deployed function is; the others are the anchors, written as a careful engineer would write
// them by hand, with nothing taken away:
// - raw success: consume with prefetch, call the (no-op) handler, ack each message;
// - raw retry: consume with prefetch, call the handler (it throws, as Boomerang's does), publish a copy
//   (persistent, mandatory, retry header + 1) to the same delay queue with a streamed confirm, ack the
//   original in its confirm callback (many in flight, never one awaited at a time);
// - rhea (a native queue, RabbitMQ 4.3+: AMQP 1.0): a receiver granting `prefetch` credit by hand
//   (rhea's own credit window tops up on arrival, not on settlement). Success: accept each message.
//   Retry: settle each `modified` (delivery failed) with its own `x-opt-delivery-time` (now + the
//   delay queue's TTL) and one annotation, its retry count + 1, so the broker holds it. rhea 3.0.5
//   merges the settlements of consecutive delivery ids written in one event-loop pass and may send the
//   second with the first one's outcome (docs: rabbitmq-4 notes), so a careful consumer never settles
//   two neighbours in one pass: each pass (a setImmediate) settles what it can, the rest wait for the next;
//   credit is given back for what was settled;
// - rhea-checked: the rhea anchor doing what Boomerang's native mode does on purpose: one GET
//   /queues/<queue> through the management API (AMQP 1.0) before it takes, as Boomerang checks its
//   queues and reads its pause marker (rhea's coders in that process then have seen a map, which costs
//   every later message some CPU: docs/proof.md), and, retrying, the failure record's annotations;
// - rascal: Rascal 21's `forward` recovery to a TTL delay queue, set up as its README's advanced
//   example (a `delay` exchange, a queue with a queue-level TTL dead-lettering back), its defaults
//   (withDefaultConfig) otherwise.
// Each is timed from connect to the last message settled; Boomerang's whole invocation (connect and
// close included, MAX_MESSAGES = N so it stops on the last one). Prints one JSON line: { ms, detail }.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const run = JSON.parse(process.argv[2]);
const require = createRequire(import.meta.url);
const amqp = require('amqplib');

const noop = () => undefined;
const failing = () => {
  throw new Error('partner down');
};
// What a handler that calls a partner does to the process: it waits on I/O (a 5 ms timer here).
const waitsOnIo = () => new Promise((resolve) => setTimeout(resolve, 5));
const handler = run.mode === 'retry' ? failing : run.mode === 'io' ? waitsOnIo : noop;

// A quorum queue may ignore acks that arrive right before a channel close (rabbitmq-server#10327,
// seen on 3.10.8): cancel first, whose cancel-ok covers the acks sent before it. Boomerang does the same.
async function closeAfterAcks(connection, channel, consumerTag) {
  await channel.cancel(consumerTag);
  await channel.close();
  await connection.close();
}

// With TRACING=opentelemetry (bench --tracing), what a team that traces registers: a tracer provider
// with a batch span processor, here over an exporter that counts the spans and drops them.
function registerTracerProvider() {
  const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
  const exported = { spans: 0 };
  const exporter = {
    export: (spans, done) => {
      exported.spans += spans.length;
      done({ code: 0 });
    },
    shutdown: async () => undefined,
  };
  const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  return { provider, exported };
}

// Registered before the CPU count starts: loading the SDK is the team's cost, once per container.
const traced = run.who === 'boomerang' && process.env.BENCH_OTEL_PROVIDER ? registerTracerProvider() : undefined;

async function boomerang() {
  const { createPullFunction } = await import(pathToFileURL(run.module).href);
  const invoke = createPullFunction(handler);
  const startedAt = performance.now();
  const summary = await invoke({}, { awsRequestId: 'bench', getRemainingTimeInMillis: () => 600_000 });
  const ms = performance.now() - startedAt;
  const settled = run.mode === 'retry' ? summary.retried : summary.acked;
  if (settled !== run.messages) throw new Error(`boomerang settled ${settled} of ${run.messages}: ${JSON.stringify(summary)}`);
  if (traced === undefined) return { ms, detail: summary };
  // After the timing: the spans still batched are exported, and there must be one per message.
  await traced.provider.forceFlush();
  if (traced.exported.spans !== run.messages) throw new Error(`boomerang traced ${traced.exported.spans} spans for ${run.messages} messages`);
  return { ms, detail: { ...summary, spans: traced.exported.spans } };
}

async function raw() {
  const startedAt = performance.now();
  const connection = await amqp.connect(run.url, { noDelay: true });
  const channel = run.mode === 'retry' ? await connection.createConfirmChannel() : await connection.createChannel();
  await channel.prefetch(run.prefetch);
  let settled = 0;
  let consumerTag = '';
  await new Promise((resolve, reject) => {
    channel.on('error', reject);
    const onMessage = (message) => {
      if (message === null) return reject(new Error('consumer cancelled'));
      try {
        handler(message);
      } catch {
        const { properties } = message;
        const headers = { ...properties.headers, 'x-retry-no': Number(properties.headers?.['x-retry-no'] ?? 0) + 1 };
        const options = { persistent: true, mandatory: true, headers, messageId: properties.messageId, contentType: properties.contentType };
        channel.publish('', run.delayQueue, message.content, options, (error) => {
          if (error) return channel.nack(message, false, true);
          channel.ack(message);
          if (++settled === run.messages) resolve();
        });
        return;
      }
      channel.ack(message);
      if (++settled === run.messages) resolve();
    };
    channel.consume(run.queue, onMessage).then((ok) => (consumerTag = ok.consumerTag), reject);
  });
  await closeAfterAcks(connection, channel, consumerTag);
  return { ms: performance.now() - startedAt, detail: { settled } };
}

// The raw anchor of the idempotency section's I/O contest: a hand-written consumer (prefetch, at most
// `concurrency` handlers at once) that, with IDEMPOTENCY_STORE set as for Boomerang, claims each
// message's id before its handler (Redis SET NX EX; DynamoDB PutItem if the id is absent), marks it
// completed after (SET EX; UpdateItem), then acks: what the store itself costs a careful engineer.
async function rawIo() {
  const startedAt = performance.now();
  // Opened in the timed run, as Boomerang opens its store at its first invocation.
  const store = openRawStore(process.env.IDEMPOTENCY_STORE);
  const connection = await amqp.connect(run.url, { noDelay: true });
  const channel = await connection.createChannel();
  await channel.prefetch(run.prefetch);
  let settled = 0;
  let running = 0;
  const waiting = [];
  let consumerTag = '';
  await new Promise((resolve, reject) => {
    channel.on('error', reject);
    const start = (message) => {
      running++;
      const id = String(message.properties.messageId);
      (async () => {
        if (store === undefined || (await store.claim(id))) {
          await handler(message);
          await store?.complete(id);
        }
        channel.ack(message);
      })().then(() => {
        running--;
        if (++settled === run.messages) return resolve();
        const next = waiting.shift();
        if (next !== undefined) start(next);
      }, reject);
    };
    const onMessage = (message) => {
      if (message === null) return reject(new Error('consumer cancelled'));
      if (running < run.concurrency) start(message);
      else waiting.push(message);
    };
    channel.consume(run.queue, onMessage).then((ok) => (consumerTag = ok.consumerTag), reject);
  });
  await closeAfterAcks(connection, channel, consumerTag);
  await store?.close();
  return { ms: performance.now() - startedAt, detail: { settled } };
}

/** The raw anchor's store, from IDEMPOTENCY_STORE as Boomerang reads it (a redis:// URL, or dynamodb:<table>); undefined: off. */
function openRawStore(spec) {
  const ttl = Number(process.env.IDEMPOTENCY_TTL_SECONDS ?? 600);
  if (spec === undefined || spec === '') return undefined;
  if (spec.startsWith('redis')) {
    const { Redis } = require('ioredis');
    const redis = new Redis(spec);
    return {
      claim: async (id) => (await redis.set(`raw#${id}`, '{"status":"INPROGRESS"}', 'EX', ttl, 'NX')) !== null,
      complete: async (id) => {
        await redis.set(`raw#${id}`, '{"status":"COMPLETED"}', 'EX', ttl);
      },
      close: async () => redis.disconnect(),
    };
  }
  const table = spec.replace(/^dynamodb:/, '');
  const { DynamoDBClient, PutItemCommand, UpdateItemCommand } = require('@aws-sdk/client-dynamodb');
  // The endpoint (AWS_ENDPOINT_URL_DYNAMODB), region and credentials come from the environment, as for Boomerang.
  const client = new DynamoDBClient({});
  const expiration = () => ({ N: String(Math.floor(Date.now() / 1000) + ttl) });
  return {
    claim: async (id) => {
      try {
        await client.send(
          new PutItemCommand({
            TableName: table,
            Item: { id: { S: `raw#${id}` }, expiration: expiration(), status: { S: 'INPROGRESS' } },
            ConditionExpression: 'attribute_not_exists(id)',
          }),
        );
        return true;
      } catch (error) {
        if (error.name === 'ConditionalCheckFailedException') return false;
        throw error;
      }
    },
    complete: async (id) => {
      await client.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { id: { S: `raw#${id}` } },
          UpdateExpression: 'SET #status = :completed, expiration = :expiration',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':completed': { S: 'COMPLETED' }, ':expiration': expiration() },
        }),
      );
    },
    close: async () => client.destroy(),
  };
}

async function rascal() {
  const { BrokerAsPromised, withDefaultConfig } = require('rascal');
  const delayQueue = `${run.queue}.rascal-delay`;
  const delayExchange = `${run.queue}.rascal-delay-x`;
  const config = {
    vhosts: {
      '/': {
        connection: { url: run.url, socketOptions: { noDelay: true } },
        exchanges: { [delayExchange]: { type: 'direct' } },
        queues: {
          // The work queue exists (Boomerang's topology declared it): check it, do not redeclare it.
          [run.queue]: { assert: false, check: true },
          [delayQueue]: { options: { durable: true, arguments: run.delayQueueArguments } },
        },
        bindings: { delay: { source: delayExchange, destination: delayQueue, bindingKey: 'later' } },
        publications: { retry_later: { exchange: delayExchange, routingKey: 'later' } },
        subscriptions: { work: { queue: run.queue, prefetch: run.prefetch } },
      },
    },
  };
  const startedAt = performance.now();
  const broker = await BrokerAsPromised.create(withDefaultConfig(config));
  let failure;
  broker.on('error', (error) => (failure ??= error));
  const subscription = await broker.subscribe('work');
  let settled = 0;
  const ms = await new Promise((resolve, reject) => {
    subscription.on('error', reject);
    subscription.on('message', (message, _content, ackOrNack) => {
      try {
        handler(message);
      } catch (error) {
        ackOrNack(error, { strategy: 'forward', publication: 'retry_later' }, (err) => {
          if (err) failure ??= err;
          if (++settled === run.messages) resolve(performance.now() - startedAt);
        });
      }
    });
  });
  await subscription.cancel();
  await broker.shutdown();
  if (failure) throw failure;
  return { ms, detail: { settled, delayQueue, delayExchange } };
}

// rhea's connect options from an amqp:// URL: RabbitMQ 4.x reads the vhost from the open frame's hostname.
function rheaConnect() {
  const url = new URL(run.url);
  const vhost = decodeURIComponent(url.pathname.slice(1)) || '/';
  const rhea = require('rhea');
  return rhea.create_container({ id: `bench-rhea-${process.pid}` }).connect({
    host: url.hostname,
    port: Number(url.port || 5672),
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    hostname: `vhost:${vhost}`,
    reconnect: false,
  });
}

// The management API's answer to GET /queues/<queue> (RabbitMQ 4.x, AMQP 1.0), asked on a link pair of its own
// session: what a consumer that checks its queue before it takes asks, as Boomerang's native mode does.
async function askManagement(connection, queue) {
  const session = connection.create_session();
  session.begin();
  const link = { name: 'bench-management', snd_settle_mode: 1, properties: { paired: true } };
  const sender = session.open_sender({ ...link, target: { address: '/management' } });
  await new Promise((resolve) => sender.once('sendable', resolve));
  const receiver = session.open_receiver({ ...link, source: { address: '/management' }, rcv_settle_mode: 0, credit_window: 10, autoaccept: false });
  await new Promise((resolve) => receiver.once('receiver_open', resolve));
  const reply = await new Promise((resolve) => {
    receiver.once('message', (context) => resolve(context.message));
    sender.send({ message_id: 'bench-1', to: `/queues/${encodeURIComponent(queue)}`, subject: 'GET', reply_to: '$me', body: null });
  });
  if (String(reply.subject) !== '200') throw new Error(`GET /queues/${queue} answered ${reply.subject}`);
}

// The annotations Boomerang's native retry writes (shared/native/native-annotations.ts), for a first failure:
// the delivery time, the count, its own returns, the error's name and message, the failure times and the history.
function failureRecord(error, retryNo) {
  const now = Date.now();
  const at = new Date(now).toISOString();
  return {
    'x-opt-delivery-time': now + run.delayMs,
    'x-opt-boomerang-retry-no': retryNo,
    'x-opt-boomerang-failed-settlements': 1,
    'x-opt-boomerang-error-name': error.name,
    'x-opt-boomerang-error-message': error.message,
    'x-opt-boomerang-first-failure-at': at,
    'x-opt-boomerang-last-failure-at': at,
    'x-opt-boomerang-failure-history': `${at} ${error.name}: ${error.message}`,
  };
}

async function rheaAnchor(checked = false) {
  const startedAt = performance.now();
  const connection = rheaConnect();
  if (checked) await askManagement(connection, run.queue);
  let settled = 0;
  const receiver = connection.open_receiver({ source: { address: `/queues/${encodeURIComponent(run.queue)}` }, autoaccept: false, credit_window: 0 });
  await new Promise((resolve, reject) => {
    connection.on('connection_error', (context) => reject(context.connection.error ?? new Error('connection error')));
    connection.on('disconnected', (context) => reject(context.error ?? new Error('disconnected')));
    receiver.on('receiver_error', (context) => reject(context.receiver.error ?? new Error('receiver error')));
    receiver.once('receiver_open', () => receiver.add_credit(run.prefetch));
    // Retry: settlements wait for the end of the pass, then go out neighbour-free (see the header).
    let pending = [];
    let scheduled = false;
    const pass = () => {
      scheduled = false;
      const written = new Set();
      const held = [];
      for (const item of pending) {
        const id = item.delivery.id;
        if (written.has(id - 1) || written.has(id + 1)) {
          held.push(item);
          continue;
        }
        written.add(id);
        item.delivery.modified({ delivery_failed: true, undeliverable_here: false, message_annotations: item.annotations });
      }
      pending = held;
      settled += written.size;
      receiver.add_credit(written.size);
      if (pending.length > 0) schedule();
      else if (settled === run.messages) setImmediate(resolve);
    };
    const schedule = () => {
      if (scheduled) return;
      scheduled = true;
      setImmediate(pass);
    };
    // Success: accepted outcomes merge correctly; the credit goes back a quarter of the window at a time.
    let owed = 0;
    const quarter = Math.max(1, Math.floor(run.prefetch / 4));
    receiver.on('message', (context) => {
      try {
        handler(context.message);
      } catch (error) {
        const retryNo = Number(context.message.message_annotations?.[checked ? 'x-opt-boomerang-retry-no' : 'x-opt-retry-no'] ?? 0) + 1;
        const annotations = checked ? failureRecord(error, retryNo) : { 'x-opt-delivery-time': Date.now() + run.delayMs, 'x-opt-retry-no': retryNo };
        pending.push({ delivery: context.delivery, annotations });
        schedule();
        return;
      }
      context.delivery.accept();
      if (++settled === run.messages) return setImmediate(resolve);
      if (++owed >= quarter) {
        receiver.add_credit(owed);
        owed = 0;
      }
    });
  });
  await new Promise((resolve) => {
    receiver.once('receiver_close', () => resolve());
    receiver.close();
    setTimeout(resolve, 1000);
  });
  await new Promise((resolve) => {
    connection.once('connection_close', () => resolve());
    connection.close();
    setTimeout(resolve, 1000);
  });
  return { ms: performance.now() - startedAt, detail: { settled } };
}

const contestants = { boomerang, raw: run.mode === 'io' ? rawIo : raw, rhea: () => rheaAnchor(false), 'rhea-checked': () => rheaAnchor(true), rascal };
try {
  // CPU used by this client process over the run (connect included): per message, it is far less
  // noisy than the wall clock on a shared machine, and it is what the client leaves to the broker.
  const cpuBefore = process.cpuUsage();
  const result = await contestants[run.who]();
  const cpu = process.cpuUsage(cpuBefore);
  // Then exit: a warm container's idempotency store client (idempotency section) stays open, as in Lambda.
  process.stdout.write(`${JSON.stringify({ ...result, cpuMicrosPerMessage: (cpu.user + cpu.system) / run.messages })}\n`, () => process.exit());
} catch (error) {
  process.stderr.write(`${error.stack ?? error}\n`, () => process.exit(1));
}
