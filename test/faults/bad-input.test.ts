import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Handler } from '../../shared/message/message.js';
import type { Summary } from '../../shared/observability/summary.js';
import { silentLogger } from '../helpers/fakes.js';
import { runPull } from '../../shared/pull/pull.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { AMQP_URL, sleep } from '../helpers/broker.js';
import { FaultScenario, withChannel } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';
import { messageKey } from '../helpers/flaky-recorder.js';
import { spawnInvoke, type InvokeResult } from '../helpers/invoke-child.js';
import { describeAccount } from '../helpers/message-account.js';

/**
 * Bad input: every message must end handled, or parked with a reason that says why, or stay in its
 * queue; and the function, run as its own process exactly as `npm run invoke` runs it, never crashes
 * (so it can never crash in a loop on the same message).
 */
const HANDLER = 'test/faults/handlers/json-handler.ts';
const LARGE_BYTES = 8 * 1024 * 1024;

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const failOnce = json({ failTimes: 1 });

describe('bad input', () => {
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it('ends every malformed message handled or parked with a reason, and no invocation crashes', async () => {
    // Prepare
    scenario = await FaultScenario.prepare({
      url: AMQP_URL,
      label: 'bad',
      messages: 0,
      env: { MAX_RETRIES: '2', BACKOFF_INITIAL_MS: '50', BACKOFF_MULTIPLIER: '2', BACKOFF_MAX_MS: '200', BACKOFF_JITTER: '0', IDLE_TIMEOUT_MS: '1000' },
    });
    const s = scenario;
    const large = json({ failTimes: 1, padding: 'x'.repeat(LARGE_BYTES) });
    const noProperties = json({ failTimes: 1, marker: 'published with no properties at all' });
    const persistent = { persistent: true };
    await s.publishRaw([
      { key: 'not-json', content: Buffer.from('this is {not json'), options: { ...persistent, messageId: 'not-json' } },
      { key: 'not-utf8', content: Buffer.from([0xff, 0xfe, 0x00, 0x7b]), options: { ...persistent, messageId: 'not-utf8' } },
      { key: 'empty', content: Buffer.alloc(0), options: { ...persistent, messageId: 'empty' } },
      { key: 'json-null', content: Buffer.from('null'), options: { ...persistent, messageId: 'json-null' } },
      { key: 'large', content: large, options: { ...persistent, messageId: 'large' } },
      { key: 'retry-abc', content: failOnce, options: { ...persistent, messageId: 'retry-abc', headers: { 'x-retry-no': 'abc' } } },
      { key: 'retry-minus-1', content: failOnce, options: { ...persistent, messageId: 'retry-minus-1', headers: { 'x-retry-no': -1 } } },
      { key: 'retry-1e12', content: failOnce, options: { ...persistent, messageId: 'retry-1e12', headers: { 'x-retry-no': 1e12 } } },
      { key: 'retry-table', content: failOnce, options: { ...persistent, messageId: 'retry-table', headers: { 'x-retry-no': { count: 3 } } } },
      { key: 'retry-1.5', content: failOnce, options: { ...persistent, messageId: 'retry-1.5', headers: { 'x-retry-no': 1.5 } } },
      { key: messageKey(undefined, noProperties), content: noProperties, options: {} },
    ]);
    const childEnv = { ...s.env, FAULT_RECORD_FILE: s.recordFile, LOG_LEVEL: 'warn' };

    // Act: invoke as a scheduler would until nothing is left on its way.
    const results: InvokeResult[] = [];
    for (let i = 0; i < 10 && (await s.inFlight()) > 0; i++) {
      results.push(await spawnInvoke({ handler: HANDLER, queue: s.config.workQueue, budgetMs: 20_000, env: childEnv }).exited);
      await sleep(300);
    }
    const account = await s.account();

    // Assess: no invocation crashed, nothing is missing or doubled.
    const logMessages = results
      .flatMap((r) => r.stderr.split('\n'))
      .flatMap((line) => {
        try {
          return [String((JSON.parse(line) as { message?: unknown }).message)];
        } catch {
          return [];
        }
      });
    reportFault('bad-input', {
      invocations: results.length,
      exitCodes: results.map((r) => r.code),
      sent: account.sent,
      handled: account.handled,
      parked: account.parked,
      missing: account.missing.length,
      duplicates: account.duplicates,
      parkReasons: Object.fromEntries(
        [...account.parkedHeaders].map(([id, h]) => [id, `${String(h['boomerang-park-reason'])}: ${String(h['boomerang-error-message'])}`]),
      ),
    });
    console.log(`[fault] bad-input: ${describeAccount(account)}`);
    expect(results.map((r) => r.code)).toEqual(results.map(() => 0));
    expect(account.missing).toEqual([]);
    expect(account.duplicates).toBe(0);
    expect(account.stillQueued).toBe(0);

    // Parked, with a reason that says why.
    const parked = (id: string) => {
      const headers = account.parkedHeaders.get(id);
      return `${String(headers?.['boomerang-park-reason'])} | ${String(headers?.['boomerang-error-name'])}: ${String(headers?.['boomerang-error-message'])}`;
    };
    expect(parked('not-json')).toMatch(/^unrecoverable error UnrecoverableError \| UnrecoverableError: message body is not valid JSON/);
    expect(parked('not-utf8')).toMatch(/^unrecoverable error UnrecoverableError \| UnrecoverableError: message body is not valid JSON/);
    expect(parked('empty')).toBe('unrecoverable error UnrecoverableError | UnrecoverableError: message body is empty; expected JSON');
    expect(parked('json-null')).toMatch(/^retries exhausted: 2 of 2 made \| TypeError: Cannot read properties of null/);
    expect(account.parked).toBe(4);

    // Handled after one retry: the large body intact, malformed counts read as 0 (with a warning).
    const handledLines = readFileSync(s.recordFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('S '));
    const handledAt = new Map(
      handledLines.map((l) => l.split(' ')).map(([, id, retryNo, , bytes]) => [id, { retryNo: Number(retryNo), bytes: Number(bytes) }]),
    );
    for (const id of ['large', 'retry-abc', 'retry-minus-1', 'retry-1e12', 'retry-table', 'retry-1.5', messageKey(undefined, noProperties)]) {
      expect(handledAt.get(id)?.retryNo, id).toBe(1);
    }
    expect(handledAt.get('large')?.bytes).toBe(large.length);
    for (const shown of ['string "abc"', 'number -1', 'number 1000000000000', 'a object', 'number 1.5']) {
      expect(logMessages).toContain(`header x-retry-no is malformed (${shown}); counted as 0 retries`);
    }
  });

  it('leaves messages in the work queue when their delay queue is deleted under a running invocation, and never loops', async () => {
    // Prepare: one delay tier (100 ms); 20 messages that fail once.
    scenario = await FaultScenario.prepare({
      url: AMQP_URL,
      label: 'unroutable',
      messages: 0,
      env: { MAX_RETRIES: '1', BACKOFF_INITIAL_MS: '100', BACKOFF_JITTER: '0', IDLE_TIMEOUT_MS: '500' },
    });
    const s = scenario;
    await s.publishRaw(Array.from({ length: 20 }, (_, i) => ({ key: `u-${i}`, content: failOnce, options: { persistent: true, messageId: `u-${i}` } })));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let attempts = 0;
    const gatedFailure: Handler = async () => {
      attempts++;
      await gate;
      throw new Error('partner down');
    };

    // Act 1: delete the delay queue while the first handlers are running.
    const running = runPull({ config: s.config, handler: gatedFailure, budgetMs: 10_000, log: silentLogger });
    while (attempts === 0) await sleep(5);
    await withChannel(AMQP_URL, (_c, channel) => channel.deleteQueue(tierQueueName(s.config.workQueue, 100)));
    release();
    // The unroutable copy fails the invocation (it would fail every run until the topology is applied).
    const drift = await running.then(
      () => undefined,
      (error: unknown) => error as { name?: string; summary?: Summary },
    );
    const first = drift?.summary as Summary;

    // Act 2: three more invocations, as a scheduler would run them, with the queue still gone.
    const childEnv = { ...s.env, FAULT_RECORD_FILE: s.recordFile, LOG_LEVEL: 'error' };
    const later: InvokeResult[] = [];
    const attemptsPerInvocation: { attempts: number; distinct: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const before = failedAttempts(s.recordFile);
      later.push(await spawnInvoke({ handler: HANDLER, queue: s.config.workQueue, budgetMs: 10_000, env: childEnv }).exited);
      const these = failedAttempts(s.recordFile).slice(before.length);
      attemptsPerInvocation.push({ attempts: these.length, distinct: new Set(these).size });
    }
    const stillInWorkQueue = await withChannel(AMQP_URL, async (_c, channel) => (await channel.checkQueue(s.config.workQueue)).messageCount);

    // Act 3: the operator re-applies the topology; the next invocations carry on.
    await withChannel(AMQP_URL, (connection) => applyTopology(connection, s.plan));
    for (let i = 0; i < 4 && (await s.inFlight()) > 0; i++) {
      later.push(await spawnInvoke({ handler: HANDLER, queue: s.config.workQueue, budgetMs: 10_000, env: childEnv }).exited);
      await sleep(200);
    }
    const account = await s.account();

    // Assess
    reportFault('bad-input-unroutable', {
      firstSummary: first,
      laterSummaries: later.map((r) => r.summary),
      attemptsPerInvocation,
      stillInWorkQueue,
      sent: account.sent,
      handled: account.handled,
      missing: account.missing.length,
      duplicates: account.duplicates,
    });
    expect(drift?.name).toBe('TopologyDriftError');
    expect(first).toMatchObject({ retried: 0, parked: 0, acked: 0, stoppedBecause: 'publish-failed' });
    expect(first.requeued).toBe(first.received);
    // Later invocations find the missing delay queue before they take a message, and fail loudly.
    for (const result of later.slice(0, 3)) {
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain('run topology apply with the current config');
    }
    // A broken invocation tries each message it already holds (its prefetch window) once, never twice:
    // the handler, and the partner behind it, is never called round and round.
    for (const { attempts, distinct } of attemptsPerInvocation) {
      expect(attempts).toBe(distinct);
      expect(attempts).toBeLessThanOrEqual(Math.min(20, s.config.batchSize));
    }
    expect(stillInWorkQueue).toBe(20);
    expect(later.slice(3).every((r) => r.code === 0)).toBe(true);
    expect(account.missing).toEqual([]);
    expect(account.handled).toBe(20);
    expect(account.duplicates).toBe(0);
  });
});

/** The ids of every failed attempt recorded so far, in order. */
function failedAttempts(recordFile: string): string[] {
  if (!existsSync(recordFile)) return [];
  return readFileSync(recordFile, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('F '))
    .map((l) => l.split(' ')[1] ?? '');
}
