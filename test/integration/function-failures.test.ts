import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEventFunction } from '../../shared/event/event-function.js';
import { createPullFunction } from '../../shared/pull/pull-function.js';
import type { Env } from '../../shared/config/env.js';
import type { Handler } from '../../shared/message/message.js';
import { EmfMetrics, type EmfDocument } from '../helpers/emf-metrics.js';
import type { Summary } from '../../shared/observability/summary.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { topologyOptionsFromConfig } from '../../shared/config/config.js';
import type { TopologyDriftError } from '../../shared/core/invocation-errors.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { publishJson, setUpTopology, testConfig } from '../helpers/engine.js';
import { recordingLogger } from '../helpers/fakes.js';
import { spawnInvoke } from '../helpers/invoke-child.js';
import { useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

/** A port nothing listens on: connecting is refused at once. */
const CLOSED_PORT_URL = 'amqp://guest:guest@127.0.0.1:1';

/** What `testConfig` sets, as the environment a function reads. */
function functionEnv(workQueue: string): Record<string, string> {
  return {
    AMQP_URL,
    WORK_QUEUE: workQueue,
    BACKOFF_INITIAL_MS: '200',
    BACKOFF_MULTIPLIER: '2',
    BACKOFF_MAX_MS: '3200',
    BACKOFF_JITTER: '0',
    MAX_RETRIES: '3',
    IDLE_TIMEOUT_MS: '150',
    SAFETY_MARGIN_MS: '500',
  };
}

/** A wrapper of either kind as the cloud runs it, reading `env`, with its logs and EMF lines kept. */
function instrumented(kind: 'pull' | 'event', env: Env, handler: Handler = () => undefined) {
  const logger = recordingLogger('info');
  const emf: EmfDocument[] = [];
  const given = {
    env,
    log: logger.log,
    metrics: (service: string) => new EmfMetrics({ service, write: (line: string) => emf.push(JSON.parse(line) as EmfDocument) }),
  };
  const fn = kind === 'pull' ? createPullFunction(handler, given) : createEventFunction(handler, given);
  const once = (event: unknown = {}): Promise<Summary> => fn(event, { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 4000 });
  return { once, logger, emf };
}

describe('a function invocation that fails', () => {
  it.each([
    { kind: 'pull' as const, env: { MAX_RETRIES: '-1' }, errorName: 'ConfigError', stoppedBecause: 'config-error', service: 'boomerang-pull' },
    { kind: 'event' as const, env: { MAX_RETRIES: '-1' }, errorName: 'ConfigError', stoppedBecause: 'config-error', service: 'boomerang-event' },
    {
      kind: 'pull' as const,
      env: { AMQP_URL: CLOSED_PORT_URL, CONNECT_TIMEOUT_MS: '500', FUNCTION_NAME: 'orders-retry' },
      errorName: 'BrokerConnectionError',
      stoppedBecause: 'connect-failed',
      service: 'orders-retry',
    },
  ])(
    '$kind: $errorName still logs one summary line and writes EMF with invocationErrors, then throws',
    async ({ kind, env, errorName, stoppedBecause, service }) => {
      // Prepare
      const { once, logger, emf } = instrumented(kind, env);
      const event = kind === 'event' ? { eventSource: 'aws:rmq', rmqMessagesByQueue: { 'boomerang.work::/': [] } } : {};
      // Act
      const error = await once(event).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      // Assess
      expect(error?.name).toBe(errorName);
      expect(logger.entries()).toEqual([
        expect.objectContaining({
          level: 'error',
          message: 'invocation summary: ended early',
          service,
          coldStart: true,
          errorName,
          reason: error?.message,
          summary: expect.objectContaining({ received: 0, stoppedBecause }),
        }),
      ]);
      expect(emf[0]).toMatchObject({ service, invocationErrors: 1, received: 0 });
      expect(emf).toContainEqual(expect.objectContaining({ service, errorName, invocationErrors: 1 }));
    },
  );

  it('event: names itself boomerang-event, not boomerang-pull, when no function name is set', async () => {
    // Prepare
    const { once, logger } = instrumented('event', { AMQP_URL });
    // Act: an empty batch connects to nothing
    await once({ eventSource: 'aws:rmq', rmqMessagesByQueue: {} });
    // Assess
    expect(logger.entries()).toEqual([expect.objectContaining({ message: 'invocation summary', service: 'boomerang-event', coldStart: true })]);
  });

  it('pull: takes no message while the delay path of the current config is missing, says what to run, and carries on once it is applied', async () => {
    // Prepare: the topology was applied with BACKOFF_INITIAL_MS=200 (tiers 200, 400 ... ms), the function now runs with 300
    const broker = testBroker();
    const workQueue = uniqueName('work');
    const env = functionEnv(workQueue);
    await setUpTopology(broker, testConfig(env));
    const current = testConfig({ ...env, BACKOFF_INITIAL_MS: '300' });
    publishJson(broker, workQueue, { n: 1 }, { messageId: 'm-1' });
    const attempts: string[] = [];
    const { once, logger } = instrumented('pull', { ...env, BACKOFF_INITIAL_MS: '300' }, (m) => void attempts.push(String(m.properties.messageId)));

    // Act
    const drift = await once().then(
      () => undefined,
      (e: unknown) => e as Error,
    );

    // Assess: nothing taken, the message waits in its queue, the error says what to run
    expect(drift?.name).toBe('TopologyDriftError');
    expect(drift?.message).toContain(`Missing on the broker for the current config: queue ${tierQueueName(workQueue, 300)}`);
    expect(drift?.message).toContain('run topology apply with the current config');
    expect(attempts).toEqual([]);
    expect(await broker.messageCount(workQueue)).toBe(1);
    expect(logger.entries()).toContainEqual(
      expect.objectContaining({
        level: 'error',
        errorName: 'TopologyDriftError',
        summary: expect.objectContaining({ stoppedBecause: 'topology-drift', received: 0 }),
      }),
    );

    // Act: the operator applies the current config; the next invocation works
    await setUpTopology(broker, current);
    const summary = await once();

    // Assess
    expect(summary).toMatchObject({ received: 1, acked: 1 });
    expect(attempts).toEqual(['m-1']);
  });

  it('pull: a tier queue deleted by hand after apply costs one returned copy, whose invocation deletes the marker; the next checks each destination and takes nothing', async () => {
    // Prepare: applied (with its marker), then one tier queue deleted; a message that fails
    const broker = testBroker();
    const workQueue = uniqueName('work');
    const env = functionEnv(workQueue);
    const config = testConfig(env);
    await setUpTopology(broker, config);
    const marker = buildTopologyPlan(topologyOptionsFromConfig(config)).marker as string;
    await broker.channel.deleteQueue(tierQueueName(workQueue, 200));
    publishJson(broker, workQueue, { n: 1 }, { messageId: 'm-1' });
    const { once } = instrumented('pull', env, () => {
      throw new Error('partner down');
    });

    // Act: the marker vouches for the path, so the first invocation takes the message and its copy comes back
    const first = await once().then(
      () => undefined,
      (e: unknown) => e as TopologyDriftError,
    );
    const markerAfterFirst = await broker.exists('exchange', marker);
    const second = await once().then(
      () => undefined,
      (e: unknown) => e as TopologyDriftError,
    );

    // Assess: the first deleted the marker, so the second (any container's next cold start) checks each destination: nothing taken, the queue named
    expect(first?.name).toBe('TopologyDriftError');
    expect(markerAfterFirst).toBe(false);
    expect(first?.summary?.received).toBeGreaterThan(0);
    expect(second?.missing).toEqual([`queue ${tierQueueName(workQueue, 200)}`]);
    expect(second?.summary).toBeUndefined();
    expect(await broker.messageCount(workQueue)).toBe(1);
    expect(await broker.exists('exchange', marker)).toBe(false);
  });

  it('boomerang invoke pull: exits 1 on a missing delay path, saying what to run, and leaves the message', async () => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('work');
    const env = functionEnv(workQueue);
    await setUpTopology(broker, testConfig(env));
    publishJson(broker, workQueue, { n: 1 });
    // Act: the function runs with another first delay than the one applied
    const result = await spawnInvoke({ handler: 'test/bench/handlers/noop.ts', queue: workQueue, budgetMs: 5000, env: { ...env, BACKOFF_INITIAL_MS: '300' } })
      .exited;
    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('TopologyDriftError');
    expect(result.stderr).toContain('run topology apply with the current config');
    expect(await broker.messageCount(workQueue)).toBe(1);
  });

  it.each(['tiers', 'exact'])('pull: finds the delay path of an applied %s topology and takes messages', async (mode) => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('work');
    const env = { ...functionEnv(workQueue), DELAY_MODE: mode, EXACT_DELAY_PREFIX: uniqueName('delay') };
    await setUpTopology(broker, testConfig(env));
    publishJson(broker, workQueue, { n: 1 });
    const { once } = instrumented('pull', env);
    // Act
    const summary = await once();
    // Assess
    expect(summary).toMatchObject({ received: 1, acked: 1 });
  });

  it('pull: checks the delay path once per container, not on every invocation', async () => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('work');
    const env = functionEnv(workQueue);
    const config = testConfig(env);
    await setUpTopology(broker, config);
    const { once } = instrumented('pull', env);
    await once();
    // The parking lot vanishes after the first, checked, invocation
    await broker.channel.deleteQueue(config.parkingQueue);
    publishJson(broker, workQueue, { n: 1 });
    // Act
    const summary = await once();
    // Assess: no check ran, so the succeeding message went through
    expect(summary).toMatchObject({ received: 1, acked: 1 });
  });
});
