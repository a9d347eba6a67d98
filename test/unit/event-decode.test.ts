import { describe, expect, it } from 'vitest';
import { EventShapeError } from '../../shared/errors.js';
import { decodeEvent, eventShapeProblem } from '../../shared/event/decode-event.js';
import { decodeHeaders } from '../../shared/event/decode-headers.js';
import { decodeMessage } from '../../shared/event/decode-message.js';
import { parseQueueKey } from '../../shared/event/rmq-event.js';
import { readRetryNo } from '../../shared/message/headers.js';
import { badEvents, fixtureMessages, readEventFixture } from '../fixtures/events.js';

const ROUTING = { workQueue: 'orders', parkingQueue: 'orders.parking' };

describe('parseQueueKey', () => {
  it.each([
    ['orders::/', { queue: 'orders', vhost: '/' }],
    ['orders::prod', { queue: 'orders', vhost: 'prod' }],
    ['a::b::/', { queue: 'a::b', vhost: '/' }],
    ['orders', { queue: 'orders', vhost: undefined }],
    ['::/', { queue: undefined, vhost: '/' }],
  ])('splits %j at the last "::"', (key, expected) => {
    // Act & Assess
    expect(parseQueueKey(key)).toEqual(expected);
  });
});

describe('decodeHeaders', () => {
  it.each<[string, unknown, Record<string, unknown>]>([
    ['null → no headers', null, {}],
    ['byte arrays → strings, numbers and booleans kept', { a: { bytes: [104, 105] }, n: 10, b: true }, { a: 'hi', n: 10, b: true }],
    ['signed Java bytes → UTF-8', { city: { bytes: [90, -61, -68, 114, 105, 99, 104] } }, { city: 'Zürich' }],
    ['bytes that are not UTF-8 → a Buffer', { raw: { bytes: [255, 0, 254] } }, { raw: Buffer.from([255, 0, 254]) }],
    ['nested tables and arrays', { 'x-death': [{ count: 1, queue: { bytes: [113] } }] }, { 'x-death': [{ count: 1, queue: 'q' }] }],
    ['a table that only looks like bytes stays a table', { t: { bytes: [1], other: 2 } }, { t: { bytes: [1], other: 2 } }],
    ['out-of-range "bytes" stay a table', { t: { bytes: [300] } }, { t: { bytes: [300] } }],
    ['null values kept (amqplib sends them as void)', { v: null }, { v: null }],
  ])('%s', (_case, raw, expected) => {
    // Prepare
    const notes: string[] = [];
    // Act
    const headers = decodeHeaders(raw, notes);
    // Assess
    expect(headers).toEqual(expected);
    expect(notes).toEqual([]);
  });

  it('drops headers that are not a table, with a note', () => {
    // Prepare
    const notes: string[] = [];
    // Act
    const headers = decodeHeaders([1, 2], notes);
    // Assess
    expect(headers).toEqual({});
    expect(notes).toEqual(['headers are not a table (an array); dropped']);
  });
});

describe('decodeMessage', () => {
  it('decodes the AWS sample: body, properties, byte-array headers and the Java timestamp', () => {
    // Prepare
    const [raw] = fixtureMessages('aws-sample');
    // Act
    const { delivery, problem, notes } = decodeMessage(raw, 'pizzaQueue');
    // Assess
    expect(problem).toBeUndefined();
    expect(delivery.content.toString()).toBe('{"timeout":0,"data":"CZrmf0Gw8Ov4bqLQxD4E"}');
    expect(delivery.properties).toMatchObject({
      contentType: 'text/plain',
      deliveryMode: 1,
      priority: 34,
      expiration: '60000',
      timestamp: 2021,
      userId: 'AIDACKCEVSQ6C2EXAMPLE',
      messageId: undefined,
    });
    expect(delivery.properties.headers).toEqual({ header1: 'value1', header2: 'value2', numberInHeader: 10 });
    expect(delivery.fields).toEqual({ deliveryTag: 0, redelivered: false, exchange: '', routingKey: 'pizzaQueue', consumerTag: '' });
    // The sample's bodySize (80) does not match its data (43 bytes): said, not fatal.
    expect(notes).toEqual(['bodySize says 80 bytes but data holds 43']);
  });

  it('decodes a message whose every property is null', () => {
    // Prepare
    const [raw] = fixtureMessages('all-null');
    // Act
    const { delivery, problem, notes } = decodeMessage(raw, 'orders');
    // Assess
    expect(problem).toBeUndefined();
    expect(notes).toEqual([]);
    expect(delivery.content.toString()).toBe('{"orderId":7}');
    expect(delivery.fields.redelivered).toBe(true);
    expect(delivery.properties.headers).toEqual({});
    expect(Object.values({ ...delivery.properties, headers: undefined }).every((v) => v === undefined)).toBe(true);
  });

  it('reads an x-retry-no that arrives as bytes of digits', () => {
    // Prepare
    const [raw] = fixtureMessages('byte-headers');
    // Act
    const { delivery, notes } = decodeMessage(raw, 'orders');
    // Assess
    expect(readRetryNo(delivery.properties.headers, 'x-retry-no')).toEqual({ retryNo: 2 });
    expect(delivery.properties.headers).toMatchObject({ tenant: 'acme', city: 'Zürich', binary: Buffer.from([255, 0, 254]), attempt: 3, urgent: true });
    expect(delivery.properties.timestamp).toBe(Date.UTC(2026, 10, 22, 10, 15, 30) / 1000);
    expect(notes).toEqual([]);
  });

  it.each<[string, number, string]>([
    ['data that is not base64: the raw text is kept', 0, 'data (the body) is not valid base64; the parked body is the text as received'],
    ['data that is null', 1, 'data (the body) is null, not a base64 string'],
    ['a record that is not an object', 2, 'the record is not an object (a string)'],
  ])('never throws on %s; it names the problem', (_case, index, expected) => {
    // Prepare
    const raw = fixtureMessages('malformed')[index];
    // Act
    const { problem, delivery } = decodeMessage(raw, 'orders');
    // Assess
    expect(problem).toBe(expected);
    expect(delivery.content.length).toBe(index === 1 ? 0 : Buffer.byteLength(index === 0 ? 'not base64 at all!' : '"a record that is a string"'));
  });

  it('drops unusable properties with a note each and still decodes the body', () => {
    // Prepare
    const raw = fixtureMessages('malformed')[3];
    // Act
    const { delivery, problem, notes } = decodeMessage(raw, 'orders');
    // Assess
    expect(problem).toBeUndefined();
    expect(delivery.properties).toMatchObject({
      messageId: 'odd-fields',
      priority: undefined,
      deliveryMode: undefined,
      timestamp: undefined,
      contentType: undefined,
      headers: {},
    });
    expect(notes).toHaveLength(5);
  });
});

describe('eventShapeProblem', () => {
  it.each(badEvents())('names what is wrong with %s', (_case, event, problem) => {
    // Act & Assess
    expect(eventShapeProblem(event)).toBe(problem);
  });

  it.each(['aws-sample', 'all-null', 'byte-headers', 'malformed', 'local'] as const)('finds nothing wrong with the %s sample', (name) => {
    // Act & Assess
    expect(eventShapeProblem(readEventFixture(name))).toBeUndefined();
  });
});

describe('decodeEvent', () => {
  it('maps each event key to its queue, its vhost and its parking lot', () => {
    // Prepare
    const [message] = fixtureMessages('all-null');
    const event = { eventSource: 'aws:rmq', rmqMessagesByQueue: { 'orders::/': [message], 'invoices::/': [message, message] } };
    // Act
    const records = decodeEvent(event, ROUTING);
    // Assess
    expect(records.map((r) => [r.queue, r.vhost, r.parkingQueue, r.problem])).toEqual([
      ['orders', '/', 'orders.parking', undefined],
      ['invoices', '/', 'invoices.parked', undefined],
      ['invoices', '/', 'invoices.parked', undefined],
    ]);
  });

  it.each([
    ['a key naming no queue', { '::/': [{}] }, 'the event key "::/" names no queue'],
    ['a value that is not a list', { 'orders::/': { data: 'e30=' } }, 'the messages of event key "orders::/" are not a list'],
  ])('parks the content of %s into PARKING_QUEUE, never drops it', (_case, byQueue, problem) => {
    // Act
    const records = decodeEvent({ eventSource: 'aws:rmq', rmqMessagesByQueue: byQueue }, ROUTING);
    // Assess
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ queue: 'orders', parkingQueue: 'orders.parking', problem });
  });

  it.each(badEvents())('throws EventShapeError for %s, naming what is wrong', (_case, event, problem) => {
    // Act & Assess
    expect(() => decodeEvent(event, ROUTING)).toThrow(EventShapeError);
    expect(() => decodeEvent(event, ROUTING)).toThrow(`Not an aws:rmq event: ${problem}.`);
  });

  it('decodes the malformed sample into four records, three of them to park', () => {
    // Act
    const records = decodeEvent(readEventFixture('malformed'), ROUTING);
    // Assess
    expect(records.map((r) => r.problem !== undefined)).toEqual([true, true, true, false]);
  });
});
