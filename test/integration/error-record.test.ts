/**
 * Errors kept whole (issue 33, item 2): whatever a handler throws is parked with its name, its
 * message and its own fields, the same way in pull, event and (on 4.3) native mode, and
 * `parked show` prints them. Runs on 3.10, 4.0 and 4.3.
 */
import { describe, expect, it } from 'vitest';
import type { Config } from '../../shared/config/config.js';
import { runEvent } from '../../shared/event/run-event.js';
import type { Handler } from '../../shared/message/message.js';
import { parkField } from '../../shared/parked/park-fields.js';
import { toParkedView } from '../../shared/parked/parked-view.js';
import { failureEntries } from '../../shared/message/failure-history.js';
import { showParked } from '../../shared/parked/show.js';
import { listParked } from '../../shared/parked/list.js';
import { EVERYTHING } from '../../shared/parked/filters.js';
import { readMessageDetail } from '../../shared/console/parked-reads.js';
import { parkNotesQueue } from '../../shared/message/park-note.js';
import { createHash } from 'node:crypto';
import { uniqueName } from '../helpers/broker.js';
import { NATIVE_BROKER } from '../helpers/broker-version.js';
import { pullUntil, setUpTopology, testConfig, total } from '../helpers/engine.js';
import { silentLogger } from '../helpers/fakes.js';
import { runParkedCommand } from '../helpers/parked-command.js';
import { useTestBroker } from '../helpers/topology.js';
import { eventFor, rmqMessage } from '../fixtures/events.js';

const testBroker = useTestBroker();

/** What HTTP clients commonly throw: a plain object, no name, no message. */
const PLAIN = { status: 503, detail: 'upstream timeout', url: 'amqp://app:s3cret@mq.example.com/orders' };
const PLAIN_JSON = '{"status":503,"detail":"upstream timeout","url":"amqp://app:***@mq.example.com/orders"}';

/** Throws, for each message, what its body names. */
const throwsWhatTheBodySays: Handler = (message) => {
  const kind = message.body.toString();
  if (kind === 'plain') throw PLAIN;
  if (kind === 'string') throw 'partner down';
  if (kind === 'number') throw 42;
  if (kind === 'null') throw null;
  throw Object.assign(new Error('partner answered 503', { cause: new Error('socket hang up') }), { name: 'PartnerError', code: 'E503' });
};

const KINDS = ['plain', 'string', 'number', 'null', 'subclass'] as const;

/** What each kind is parked with: name, message, fields. */
const EXPECTED: Record<(typeof KINDS)[number], { name: string; message: string; fields: string | undefined }> = {
  plain: { name: 'Error', message: PLAIN_JSON, fields: PLAIN_JSON },
  string: { name: 'string', message: 'partner down', fields: undefined },
  number: { name: 'number', message: '42', fields: undefined },
  null: { name: 'null', message: 'null', fields: undefined },
  subclass: { name: 'PartnerError', message: 'partner answered 503', fields: '{"code":"E503","cause":{"name":"Error","message":"socket hang up"}}' },
};

/** Reads every parked message's recorded error, by message id. */
async function parkedErrors(config: Config, count: number): Promise<Record<string, { name: unknown; message: unknown; fields: unknown }>> {
  const parked = await testBroker().drain(config.parkingQueue, count);
  return Object.fromEntries(
    parked.map((m) => {
      const headers = m.properties.headers ?? {};
      const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString() : v);
      return [
        m.properties.messageId as string,
        { name: text(parkField(headers, 'errorName')), message: text(parkField(headers, 'errorMessage')), fields: text(parkField(headers, 'errorFields')) },
      ];
    }),
  );
}

function expectedById(): Record<string, { name: string; message: string; fields: string | undefined }> {
  return Object.fromEntries(KINDS.map((kind) => [kind, EXPECTED[kind]]));
}

async function prepare(env: Record<string, string>): Promise<Config> {
  const config = testConfig({ MAX_RETRIES: '0', ...env });
  await setUpTopology(testBroker(), config);
  return config;
}

describe('errors kept whole', () => {
  it('pull: parks whatever a handler throws with its name, message and fields, and parked show prints them', async () => {
    // Prepare
    const config = await prepare({});
    for (const kind of KINDS) testBroker().channel.sendToQueue(config.workQueue, Buffer.from(kind), { persistent: true, messageId: kind });
    // Act
    const summaries = await pullUntil(config, throwsWhatTheBodySays, (so) => total(so).parked === KINDS.length, 15_000);
    const { printed } = await runParkedCommand(testBroker(), config.parkingQueue, (ctx) => showParked(ctx, { messageId: 'plain', json: false }));
    // Assess
    expect(total(summaries)).toMatchObject({ parked: KINDS.length });
    const shown = printed.join('\n');
    expect(shown).toMatch(/^ {2}error +Error$/m);
    expect(shown.split('\n')).toContain(`  errorMessage  ${PLAIN_JSON}`);
    expect(shown.split('\n')).toContain(`  errorFields   ${PLAIN_JSON}`);
    expect(shown).not.toContain('s3cret');
    expect(await parkedErrors(config, KINDS.length)).toEqual(expectedById());
  });

  it('pull: a message too large to copy, parked by the broker as it was, is shown with its error from its park note', async () => {
    // Prepare: a body over MAX_MESSAGE_BYTES, with headers of its own, that the handler fails with a plain object
    const config = await prepare({ MAX_RETRIES: '3', MAX_MESSAGE_BYTES: '1000' });
    const big = Buffer.alloc(2000, 7);
    const own = { tenant: 'acme', count: 5 };
    testBroker().channel.sendToQueue(config.workQueue, big, { persistent: true, messageId: 'big', headers: own });
    const handler: Handler = () => {
      throw PLAIN;
    };
    // Act
    const summaries = await pullUntil(config, handler, (so) => total(so).parked === 1, 15_000);
    const shown = await runParkedCommand(testBroker(), config.parkingQueue, (ctx) => showParked(ctx, { messageId: 'big', json: false }));
    const listed = await runParkedCommand(testBroker(), config.parkingQueue, (ctx) => listParked(ctx, { filter: EVERYTHING, json: true }));
    const detail = await runParkedCommand(testBroker(), config.parkingQueue, (ctx) => readMessageDetail(ctx, { messageId: 'big' }, config.retryHeader));
    // Assess: parked by the broker, byte for byte, with nothing of Boomerang's on it
    expect(total(summaries)).toMatchObject({ parked: 1, retried: 0, requeued: 0 });
    const text = shown.printed.join('\n');
    expect(text).toMatch(/^ {2}error +Error$/m);
    expect(text.split('\n')).toContain(`  errorMessage  ${PLAIN_JSON}`);
    expect(text.split('\n')).toContain(`  errorFields   ${PLAIN_JSON}`);
    expect(text).toMatch(/^ {2}reason +too large to copy: the body is 2000 bytes, over MAX_MESSAGE_BYTES \(1000\): parked instead of retried$/m);
    expect(text).toMatch(/^ {2}recordedIn +its park note/m);
    expect(text).not.toContain('s3cret');
    expect(JSON.parse(listed.printed[0] ?? '{}')).toMatchObject({
      messageId: 'big',
      errorName: 'Error',
      errorMessage: PLAIN_JSON,
      sourceQueue: config.workQueue,
    });
    expect(detail.result.message).toMatchObject({
      stack: null,
      history: expect.arrayContaining([expect.objectContaining({ event: `failed: Error: ${PLAIN_JSON}` })]),
    });
    // The reads left the lot and the notes as they were. A reader gives its notes back by closing its
    // channel, and the broker requeues them after its close-ok: the count may lag that by a moment.
    const notesQueue = parkNotesQueue(config.parkingQueue);
    await testBroker().holds(notesQueue, 1, 5_000);
    expect(await testBroker().messageCount(notesQueue)).toBe(1);
    const [parked] = await testBroker().drain(config.parkingQueue, 1);
    expect(parked?.content.equals(big)).toBe(true);
    expect(parked?.properties.headers).toMatchObject(own);
    expect(Object.keys(parked?.properties.headers ?? {}).filter((name) => name.startsWith('boomerang-'))).toEqual([]);
    // The note: no body, none of the team's headers, the body's digest
    const [note] = await testBroker().drain(notesQueue, 1);
    expect(note?.content.length).toBe(0);
    expect(note?.properties).toMatchObject({ messageId: 'big', type: 'boomerang.park-note' });
    expect(note?.properties.headers).not.toHaveProperty('tenant');
    expect(note?.properties.headers?.['boomerang-note-of-body-sha256']).toBe(createHash('sha256').update(big).digest('hex'));
  });

  it('pull: without a notes queue, a message too large to copy is parked as a copy that carries its error', async () => {
    // Prepare: the topology of an earlier version, without the notes queue
    const config = await prepare({ MAX_RETRIES: '3', MAX_MESSAGE_BYTES: '1000' });
    await testBroker().channel.deleteQueue(parkNotesQueue(config.parkingQueue));
    const big = Buffer.alloc(2000, 8);
    testBroker().channel.sendToQueue(config.workQueue, big, { persistent: true, messageId: 'big', headers: { tenant: 'acme' } });
    const handler: Handler = () => {
      throw PLAIN;
    };
    // Act
    const summaries = await pullUntil(config, handler, (so) => total(so).parked === 1, 15_000);
    // Assess
    expect(total(summaries)).toMatchObject({ parked: 1, requeued: 0 });
    const [parked] = await testBroker().drain(config.parkingQueue, 1);
    expect(parked?.content.equals(big)).toBe(true);
    expect(parked?.properties.headers).toMatchObject({
      tenant: 'acme',
      'boomerang-error-name': 'Error',
      'boomerang-park-reason': expect.stringMatching(/^too large to copy: /),
    });
    expect(parked?.properties.headers).not.toHaveProperty('x-death');
  });

  it('event: the same record', async () => {
    // Prepare
    const config = await prepare({ FUNCTION_NAME: 'boomerang-event' });
    const event = eventFor({ [config.workQueue]: KINDS.map((kind) => rmqMessage(kind, { messageId: kind })) });
    // Act
    const summary = await runEvent({ config, handler: throwsWhatTheBodySays, event, budgetMs: 5000, log: silentLogger });
    // Assess
    expect(summary).toMatchObject({ parked: KINDS.length });
    expect(await parkedErrors(config, KINDS.length)).toEqual(expectedById());
  });

  it.runIf(NATIVE_BROKER)('native: the same record, as annotations the broker keeps', async () => {
    // Prepare
    const config = await prepare({ DELAY_MODE: 'native', WORK_QUEUE: uniqueName('native-errors') });
    for (const kind of KINDS) testBroker().channel.sendToQueue(config.workQueue, Buffer.from(kind), { persistent: true, messageId: kind });
    // Act
    const summaries = await pullUntil(config, throwsWhatTheBodySays, (so) => total(so).parked === KINDS.length, 15_000);
    // Assess
    expect(total(summaries)).toMatchObject({ parked: KINDS.length });
    expect(await parkedErrors(config, KINDS.length)).toEqual(expectedById());
  });

  it.runIf(NATIVE_BROKER)('native: a park reads like a parked copy: the routing key it was published with, the park as the last failure', async () => {
    // Prepare: published through an exchange with a routing key of its own; one retry, then parked
    const config = await prepare({ DELAY_MODE: 'native', MAX_RETRIES: '1', BACKOFF_INITIAL_MS: '300', WORK_QUEUE: uniqueName('native-reads') });
    const exchange = uniqueName('orders-x');
    testBroker().trackExchange(exchange);
    await testBroker().channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
    await testBroker().channel.bindQueue(config.workQueue, exchange, 'orders.#');
    testBroker().channel.publish(exchange, 'orders.created', Buffer.from('subclass'), { persistent: true, messageId: 'routed' });
    // Act
    const summaries = await pullUntil(config, throwsWhatTheBodySays, (so) => total(so).parked === 1, 15_000);
    // Assess
    expect(total(summaries)).toMatchObject({ retried: 1, parked: 1 });
    const [parked] = await testBroker().drain(config.parkingQueue, 1);
    const view = toParkedView(parked as NonNullable<typeof parked>);
    expect(view.routingKey).toBe('orders.created');
    const headers = parked?.properties.headers ?? {};
    const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString() : v);
    expect(text(parkField(headers, 'lastFailureAt'))).toBe(text(parkField(headers, 'parkedAt')));
    expect(Date.parse(String(text(parkField(headers, 'firstFailureAt'))))).toBeLessThan(Date.parse(String(text(parkField(headers, 'lastFailureAt')))));
  });

  // Native mode needs RabbitMQ 4.3: on the others only the copy modes run.
  it.each<{ mode: string; env: Record<string, string> }>([
    { mode: 'pull, copies', env: {} },
    ...(NATIVE_BROKER ? [{ mode: 'native', env: { DELAY_MODE: 'native' } }] : []),
  ])('$mode: the parked message carries each attempt, its time and its error, oldest first', async ({ env }) => {
    // Prepare: two retries, each attempt failing with its own message
    const config = await prepare({ ...env, MAX_RETRIES: '2', BACKOFF_INITIAL_MS: '200', WORK_QUEUE: uniqueName('history') });
    testBroker().channel.sendToQueue(config.workQueue, Buffer.from('{}'), { persistent: true, messageId: 'thrice' });
    const failing: Handler = (message) => {
      throw Object.assign(new Error(`attempt ${message.retryNo + 1} failed`), { name: 'PartnerDown' });
    };
    // Act
    const summaries = await pullUntil(config, failing, (so) => total(so).parked === 1, 15_000);
    // Assess
    expect(total(summaries)).toMatchObject({ retried: 2, parked: 1 });
    const [parked] = await testBroker().drain(config.parkingQueue, 1);
    const entries = failureEntries(parkField(parked?.properties.headers ?? {}, 'failureHistory'));
    expect(entries.map((e) => `${e.name}: ${e.message}`)).toEqual([
      'PartnerDown: attempt 1 failed',
      'PartnerDown: attempt 2 failed',
      'PartnerDown: attempt 3 failed',
    ]);
    const times = entries.map((e) => Date.parse(e.at));
    expect(times.every((t, i) => i === 0 || t >= (times[i - 1] as number) + 150)).toBe(true);
  });
});
