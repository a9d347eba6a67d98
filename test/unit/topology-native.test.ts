import { describe, expect, it } from 'vitest';
import { loadConfig, topologyOptionsFromConfig } from '../../shared/config/config.js';
import { ConfigError } from '../../shared/errors.js';
import { topologyDefinitions } from '../../shared/topology/definitions.js';
import { needsNativeBroker, nativeBrokerRefusal } from '../../shared/topology/native-broker.js';
import { NATIVE_SPARE_RETURNS, NATIVE_UNGUARDED_CRASH_ALLOWANCE, nativeDeliveryLimit } from '../../shared/topology/native-queue.js';
import { buildTopologyPlan, createDelayRouter, delayPathMarker, destinations } from '../../shared/topology/plan.js';
import { topologyOptions } from '../helpers/topology.js';

const native = topologyOptions({ delayMode: 'native', maxDelayMs: 3_600_000, native: { maxRetries: 5, crashLoopLimit: 10, minDelayMs: 900 } });

describe('buildTopologyPlan in native mode', () => {
  it('plans the parking lot and the work queue only, with no exchange, binding or marker', () => {
    // Act
    const plan = buildTopologyPlan({ ...native, brokerVersion: '4.3.6' });
    // Assess
    expect(plan).toEqual({
      exchanges: [],
      bindings: [],
      queues: [
        { name: 'orders.parking', role: 'parking', onlyIfMissing: false, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': -1 } },
        {
          name: 'orders',
          role: 'work',
          onlyIfMissing: false,
          arguments: {
            'x-queue-type': 'quorum',
            'x-delayed-retry-type': 'failed',
            'x-delayed-retry-min': 900,
            'x-delayed-retry-max': 3_600_000,
            'x-dead-letter-exchange': '',
            'x-dead-letter-routing-key': 'orders.parking',
            'x-dead-letter-strategy': 'at-least-once',
            'x-overflow': 'reject-publish',
            'x-delivery-limit': 116,
          },
        },
      ],
    });
  });

  it('plans a parking lot without a delivery limit for 4.3 or later when no version is given (an export)', () => {
    // Act
    const [parking] = buildTopologyPlan(native).queues;
    // Assess
    expect(parking?.arguments['x-delivery-limit']).toBe(-1);
  });

  it('refuses options without the native retry limits', () => {
    // Act & Assess
    expect(() => buildTopologyPlan({ ...native, native: undefined })).toThrowError(ConfigError);
  });

  it('sends nothing anywhere: the destinations are the work queue and the parking lot, and there is no marker', () => {
    // Act & Assess
    expect(destinations(native)).toEqual(['queue orders', 'queue orders.parking']);
    expect(delayPathMarker(native)).toBeUndefined();
  });

  it('has no delay router', () => {
    // Act & Assess
    expect(() => createDelayRouter(native)).toThrowError(/no delay path/);
  });

  it('is exported as the two queues and nothing else', () => {
    // Act
    const definitions = topologyDefinitions(buildTopologyPlan(native), '/');
    // Assess
    expect(definitions.exchanges).toEqual([]);
    expect(definitions.bindings).toEqual([]);
    expect(definitions.queues.map((q) => q.name)).toEqual(['orders.parking', 'orders']);
    expect(definitions.queues[1]?.arguments['x-delayed-retry-type']).toBe('failed');
  });

  it('is the only mode that needs a native broker', () => {
    // Act & Assess
    expect(needsNativeBroker(buildTopologyPlan(native))).toBe(true);
    expect(needsNativeBroker(buildTopologyPlan(topologyOptions()))).toBe(false);
  });
});

describe('nativeDeliveryLimit', () => {
  it.each([
    // maxRetries, crashLoopLimit, limit
    [5, 10, 5 + 10 + NATIVE_SPARE_RETURNS + 1],
    [0, 10, 0 + 10 + NATIVE_SPARE_RETURNS + 1],
    [1000, 20, 1000 + 20 + NATIVE_SPARE_RETURNS + 1],
    [5, 0, 5 + NATIVE_UNGUARDED_CRASH_ALLOWANCE + NATIVE_SPARE_RETURNS + 1],
  ])('maxRetries %i with CRASH_LOOP_LIMIT %i gives %i', (maxRetries, crashLoopLimit, limit) => {
    // Act & Assess
    expect(nativeDeliveryLimit({ maxRetries, crashLoopLimit })).toBe(limit);
  });

  it('stays above every failed settlement our code makes before it parks', () => {
    // Prepare: the broker dead-letters when a delivery whose x-delivery-count is the limit fails.
    const options = { maxRetries: 7, crashLoopLimit: 10 };
    // Act
    const limit = nativeDeliveryLimit(options);
    // Assess: all retries, all allowed crashes and all deferrals still leave a delivery for our park.
    expect(limit).toBeGreaterThan(options.maxRetries + options.crashLoopLimit + NATIVE_SPARE_RETURNS);
  });
});

describe('topologyOptionsFromConfig in native mode', () => {
  it.each([
    ['the defaults', {}, { maxRetries: 5, crashLoopLimit: 10, minDelayMs: 900 }, 3_600_000],
    ['no jitter', { BACKOFF_JITTER: '0' }, { maxRetries: 5, crashLoopLimit: 10, minDelayMs: 1000 }, 3_600_000],
    [
      'a 1 ms initial delay with jitter 0.6, which can ask for 0',
      { BACKOFF_INITIAL_MS: '1', BACKOFF_JITTER: '0.6' },
      { maxRetries: 5, crashLoopLimit: 10, minDelayMs: 0 },
      3_600_000,
    ],
    [
      'a rule with more retries, a shorter first delay and a longer cap',
      { RETRY_RULES: JSON.stringify([{ match: { errorName: 'E' }, maxRetries: 12, initialDelayMs: 200, maxDelayMs: 7_200_000 }]) },
      { maxRetries: 12, crashLoopLimit: 10, minDelayMs: 180 },
      7_200_000,
    ],
    [
      'a rule that never retries counts for nothing',
      { RETRY_RULES: JSON.stringify([{ match: { errorName: 'E' }, retry: false, initialDelayMs: 10 }]) },
      { maxRetries: 5, crashLoopLimit: 10, minDelayMs: 900 },
      3_600_000,
    ],
    ['CRASH_LOOP_LIMIT=0', { CRASH_LOOP_LIMIT: '0', MAX_RETRIES: '0' }, { maxRetries: 0, crashLoopLimit: 0, minDelayMs: 900 }, 3_600_000],
  ])('%s', (_name, env, expected, maxDelayMs) => {
    // Act
    const options = topologyOptionsFromConfig(loadConfig({ DELAY_MODE: 'native', ...env }));
    // Assess: min is the shortest delay asked, max the longest (a Retry-After is capped there too).
    expect(options.native).toEqual(expected);
    expect(options.maxDelayMs).toBe(maxDelayMs);
  });

  it('leaves the other modes without native limits', () => {
    // Act & Assess
    expect(topologyOptionsFromConfig(loadConfig({ DELAY_MODE: 'tiers' })).native).toBeUndefined();
  });
});

describe('nativeBrokerRefusal', () => {
  it.each([
    ['3.10.8', "RabbitMQ 3.10.8 cannot delay a message natively (4.3 or later is needed): use delayMode 'tiers' or 'exact' (DELAY_MODE=tiers or exact)"],
    ['3.13.7', 'RabbitMQ 3.13.7 cannot delay'],
    ['4.0.9', 'RabbitMQ 4.0.9 cannot delay'],
    ['4.2.4', 'RabbitMQ 4.2.4 cannot delay'],
    [undefined, 'did not say its RabbitMQ version'],
    ['not-a-version', 'announced version "not-a-version"'],
  ])('refuses %s', (version, message) => {
    // Act
    const refusal = nativeBrokerRefusal(version);
    // Assess
    expect(refusal?.name).toBe('UnsupportedBrokerError');
    expect(refusal?.brokerVersion).toBe(version);
    expect(refusal?.message).toContain(message);
    expect(refusal?.message).toContain("'tiers' or 'exact'");
  });

  it.each(['4.3.0', '4.3.6', '4.10.1', '5.0.0'])('lets %s run native mode', (version) => {
    // Act & Assess
    expect(nativeBrokerRefusal(version)).toBeUndefined();
  });
});
