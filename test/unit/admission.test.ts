import { describe, expect, it } from 'vitest';
import { parkUntried, retryNoOf } from '../../shared/core/admission.js';
import { fakeDelivery, recordingLogger } from '../helpers/fakes.js';

const config = { retryHeader: 'x-retry-no', crashLoopLimit: 10 };
const pull = { ownReturnsHeader: undefined, countsAcquired: false };
const native = { ownReturnsHeader: 'x-opt-boomerang-failed-settlements', countsAcquired: false };

describe('retryNoOf', () => {
  it.each([
    { headers: {}, expected: 0, warned: [] },
    { headers: { 'x-retry-no': 3 }, expected: 3, warned: [] },
    { headers: { 'x-retry-no': 'three' }, expected: 0, warned: ['header x-retry-no is malformed (string "three"); counted as 0 retries'] },
  ])('reads $headers as $expected', ({ headers, expected, warned }) => {
    // Arrange
    const { log, entries } = recordingLogger();
    // Act
    const retryNo = retryNoOf(fakeDelivery({ headers }), { queue: 'orders' }, config, log);
    // Assess
    expect(retryNo).toBe(expected);
    expect(entries().map((entry) => entry.message)).toEqual(warned);
  });

  it("warns of an event record's unusable fields, naming the message and the queue", () => {
    // Arrange
    const { log, entries } = recordingLogger();
    // Act
    retryNoOf(fakeDelivery({ headers: { 'x-retry-no': 1 } }), { queue: 'orders', notes: ['basicProperties.timestamp is not a date'] }, config, log);
    // Assess
    expect(entries()).toMatchObject([
      { message: 'event message has unusable fields', messageId: 'm-1', queue: 'orders', warnings: ['basicProperties.timestamp is not a date'] },
    ]);
  });
});

describe('parkUntried', () => {
  it.each([
    { name: 'a plain message', headers: {}, settings: pull, parkedBefore: 0, expected: undefined },
    { name: 'below the limit', headers: { 'x-delivery-count': 9 }, settings: pull, parkedBefore: 0, expected: undefined },
    {
      name: 'at the limit',
      headers: { 'x-delivery-count': 10 },
      settings: pull,
      parkedBefore: 0,
      expected: { reason: 'crash loop: delivered 11 times', crashLoop: true, errorName: 'CrashLoopError' },
    },
    { name: 'at the limit, one parked before', headers: { 'x-delivery-count': 10 }, settings: pull, parkedBefore: 1, expected: undefined },
    {
      name: 'native, most returns its own retries',
      headers: { 'x-delivery-count': 15, 'x-opt-boomerang-failed-settlements': 6 },
      settings: native,
      parkedBefore: 0,
      expected: undefined,
    },
    {
      name: 'native, the crashes at the limit',
      headers: { 'x-delivery-count': 16, 'x-opt-boomerang-failed-settlements': 6 },
      settings: native,
      parkedBefore: 0,
      expected: { reason: 'crash loop: delivered 17 times', crashLoop: true, errorName: 'CrashLoopError' },
    },
  ])('$name: $expected.reason', ({ headers, settings, parkedBefore, expected }) => {
    // Act
    const park = parkUntried(fakeDelivery({ headers }), { queue: 'orders' }, parkedBefore, { config, settings });
    // Assess
    expect(park === undefined ? undefined : { reason: park.reason, crashLoop: park.crashLoop, errorName: park.error.name }).toEqual(expected);
  });

  it('parks an event record that could not be decoded, whatever its counts, as not a crash loop', () => {
    // Act
    const park = parkUntried(fakeDelivery({ headers: { 'x-delivery-count': 50 } }), { queue: 'orders', problem: 'data is not base64' }, 0, {
      config,
      settings: pull,
    });
    // Assess
    expect(park).toEqual({
      error: { name: 'EventDecodeError', message: 'data is not base64', retryable: false, retryAfterMs: undefined },
      reason: 'undecodable event message: data is not base64',
      crashLoop: false,
    });
  });
});
