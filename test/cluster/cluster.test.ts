import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import amqp from 'amqplib';
import { silentLogger } from '../helpers/fakes.js';
import type { Handler } from '../../shared/message/message.js';
import { runPull } from '../../shared/pull/pull.js';
import { sleep } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';
import { createFlakyRecorder } from '../helpers/flaky-recorder.js';
import { describeAccount } from '../helpers/message-account.js';
import { Cluster, type PrivateRabbit } from '../helpers/private-rabbit.js';

/**
 * A real 3-node cluster (test/cluster/cluster.sh: boomerang-c1..c3 on 5691-5693, never
 * rabbit@localhost; 4.x nodes boomerang-r4-c1..c3 on 5791-5793 when AMQP_URL names a 4.x node), with the work, delay and parking queues as quorum queues. While messages keep
 * arriving and retrying, the node the function is connected to, which also leads every queue, is
 * stopped and started again. Nothing may be lost and no retry may come back early.
 *
 * Each message fails twice and is handled on its third attempt: it waits in the 1 s tier, then in
 * the 2 s tier. The cluster is started if it is not running, and stopped again afterwards only then.
 */
const TIERS_MS = [1000, 2000];
const PRODUCE_FOR_MS = 20_000;
const STOP_AT_MS = 5000;
const DOWN_FOR_MS = 5000;

type Attempt = { readonly retryNo: number; readonly at: number };

describe('Boomerang on a 3-node cluster with quorum queues', () => {
  const cluster = Cluster.likeBrokerUnderTest();
  const [c1, , c3] = cluster.nodes;
  const urls = cluster.nodes.map((n) => n.url).join(',');
  let startedHere = false;
  let scenario: FaultScenario | undefined;

  beforeAll(async () => {
    const running = await Promise.all(cluster.nodes.map((n) => n.isRunning()));
    startedHere = !running.every(Boolean);
    console.log(`cluster of flavour ${cluster.flavour}`, await cluster.start());
  });

  afterAll(async () => {
    await scenario?.cleanup(c3.url).catch(() => undefined);
    if (startedHere) console.log(await cluster.stop());
  });

  it('loses nothing and honours every delay while the leading node is stopped and started again', async () => {
    // Prepare: queues declared through c1, so c1 leads them (client-local leader placement).
    scenario = await FaultScenario.prepare({
      url: urls,
      label: 'cluster',
      messages: 0,
      env: {
        QUEUE_TYPE: 'quorum',
        MAX_RETRIES: '3',
        BACKOFF_INITIAL_MS: '1000',
        BACKOFF_MULTIPLIER: '2',
        BACKOFF_JITTER: '0',
        IDLE_TIMEOUT_MS: '1000',
        CONNECT_TIMEOUT_MS: '5000',
      },
    });
    const s = scenario;
    const leadersBefore = await c3.ctl('-q', 'list_queues', 'name', 'type', 'leader', '--no-table-headers');
    const attempts = new Map<string, Attempt[]>();
    const record = createFlakyRecorder({ recordFile: s.recordFile, failPercent: 0, seed: 'cluster' });
    const handler: Handler = async (message, context) => {
      const id = message.properties.messageId ?? '?';
      attempts.set(id, [...(attempts.get(id) ?? []), { retryNo: message.retryNo, at: Date.now() }]);
      if (message.retryNo < TIERS_MS.length) throw new Error(`fails on attempt ${message.retryNo + 1} on purpose`);
      await record(message, context);
    };

    // Act: a producer on c3, the function in a loop (as a scheduler), and c1 stopped then started.
    const startedAt = Date.now();
    let producing = true;
    const producer = produce(c3.url, s, () => producing);
    let pulling = true;
    const invocationErrors: string[] = [];
    const timeline: string[] = [];
    let invocations = 0;
    const puller = (async () => {
      while (pulling) {
        invocations++;
        const t0 = Date.now() - startedAt;
        await runPull({ config: s.config, handler, budgetMs: 4000, log: silentLogger }).then(
          (summary) => timeline.push(`${t0}+${summary.durationMs} ${summary.stoppedBecause} r${summary.received}`),
          (error: Error) => {
            invocationErrors.push(`${error.name}: ${error.message}`);
            timeline.push(`${t0} ${error.name}`);
          },
        );
        await sleep(50);
      }
    })();
    await sleep(STOP_AT_MS);
    const stopAt = Date.now();
    await c1.stop();
    const stoppedAt = Date.now();
    await sleep(DOWN_FOR_MS);
    const startAt = Date.now();
    await c1.start();
    const upAt = Date.now();
    await sleep(Math.max(0, startedAt + PRODUCE_FOR_MS - Date.now()));
    producing = false;
    await producer;
    const notBack = () => s.ids.filter((id) => (attempts.get(id)?.length ?? 0) <= TIERS_MS.length).length;
    const producedUntil = Date.now();
    let deadline = producedUntil + 30_000;
    while (Date.now() < deadline && (notBack() > 0 || (await s.inFlight(c3.url)) > 0)) await sleep(250);
    const unfinished = notBack();
    const stateWhenUnfinished = unfinished > 0 ? await quorumOverview(c3, s.config.workQueue) : undefined;
    // Messages that did not come back: wait longer, to tell "late" from "stuck".
    deadline = Date.now() + Number(process.env.CLUSTER_STUCK_WAIT_S ?? '60') * 1000;
    while (unfinished > 0 && Date.now() < deadline && notBack() > 0) await sleep(1000);
    const stillNotBack = notBack();
    // RabbitMQ 3.10.8 can strand at-least-once dead letters after a queue's leader moved: they stay in
    // the delay queue (the overview above counts them as discarded) and never reach the work queue
    // (runs of this test: 21 and 62 messages; waiting 240 s more did not help; rabbitmq-server#16652
    // reports the same on 4.2). The operator's remedy, tried here: restart the nodes that lead the
    // delay queues, so that each queue starts a new dead-letter worker. Those messages are not lost,
    // but their delays are not honoured; they are reported apart.
    const stranded = new Set(s.ids.filter((id) => (attempts.get(id)?.length ?? 0) <= TIERS_MS.length));
    let remedy: { restarted: string[]; backAfterMs: number; notBackAfter: number } | undefined;
    if (stillNotBack > 0) {
      const leaders = await c3.ctl('-q', 'list_queues', 'name', 'leader', '--no-table-headers');
      const delayLeaders = new Set(
        leaders
          .split('\n')
          .filter((line) => line.includes(`${s.config.workQueue}.delay.`))
          .map((line) => line.trim().split(/\s+/)[1]),
      );
      const restarted: string[] = [];
      const remedyAt = Date.now();
      for (const node of cluster.nodes.filter((n) => delayLeaders.has(`${n.name}@localhost`))) {
        await node.stop();
        await node.start();
        restarted.push(node.name);
      }
      deadline = Date.now() + 90_000;
      while (Date.now() < deadline && notBack() > 0) await sleep(1000);
      remedy = { restarted, backAfterMs: Date.now() - remedyAt, notBackAfter: notBack() };
    }
    const lastBackAfterProductionMs = Math.max(0, ...[...attempts.values()].map((list) => (list[list.length - 1]?.at ?? 0) - producedUntil));
    pulling = false;
    await puller;
    await s.drainUntilQuiet({ quietMs: 3000 });
    const account = await s.account(c3.url);

    // Assess: where every message ended, and how each delay was kept.
    const lateness: { ms: number; duringOutage: boolean }[] = [];
    const early: string[] = [];
    for (const [id, list] of attempts) {
      if (stranded.has(id) && remedy !== undefined) continue;
      for (let r = 1; r < list.length && r <= TIERS_MS.length; r++) {
        const previous = list[r - 1] as Attempt;
        const current = list[r] as Attempt;
        if (current.retryNo !== r || previous.retryNo !== r - 1) continue;
        const waited = current.at - previous.at;
        const due = previous.at + (TIERS_MS[r - 1] as number);
        if (waited < (TIERS_MS[r - 1] as number)) early.push(`${id}: retry ${r} after ${waited} ms`);
        lateness.push({ ms: current.at - due, duringOutage: due >= stopAt - 3000 && previous.at <= upAt + 3000 });
      }
    }
    const calm = lateness
      .filter((l) => !l.duringOutage)
      .map((l) => l.ms)
      .sort((a, b) => a - b);
    const outage = lateness
      .filter((l) => l.duringOutage)
      .map((l) => l.ms)
      .sort((a, b) => a - b);
    const figures = {
      sent: account.sent,
      handled: account.handled,
      parked: account.parked,
      missing: account.missing.length,
      duplicates: account.duplicates,
      invocations,
      failedInvocations: invocationErrors.length,
      exampleError: invocationErrors[0],
      stopTookMs: stoppedAt - stopAt,
      downForMs: upAt - stoppedAt,
      restartTookMs: upAt - startAt,
      retriesMeasured: lateness.length,
      early: early.length,
      latenessMsOutsideOutage: summarize(calm),
      latenessMsAroundOutage: summarize(outage),
      timeline: process.env.CLUSTER_DEBUG ? timeline : timeline.length,
      unfinishedAfter30s: unfinished,
      stillNotBackAfterLongWait: stillNotBack,
      strandedByBrokerThenRemedied: remedy ? { count: stillNotBack, ...remedy } : undefined,
      lastBackAfterProductionMs,
      stateWhenUnfinished,
      leadersBefore: leadersBefore
        .trim()
        .split('\n')
        .filter((l) => l.includes(s.config.workQueue)),
    };
    reportFault('cluster-node-restart', figures);
    console.log(
      `[fault] cluster: ${describeAccount(account)}${remedy ? `; ${stillNotBack} stranded by the broker's dead-letter worker, back ${remedy.backAfterMs} ms after restarting ${remedy.restarted.join(', ')} (not back: ${remedy.notBackAfter}); their delays are not counted` : ''}`,
    );
    expect(account.sent).toBeGreaterThan(500);
    expect(account.missing).toEqual([]);
    expect(account.strangers).toEqual([]);
    expect(account.stillQueued).toBe(0);
    expect(account.parked).toBe(0);
    expect(early).toEqual([]);
    expect(percentile(calm, 0.99)).toBeLessThan(1000);
    expect(Math.max(0, ...outage)).toBeLessThan(DOWN_FOR_MS + 15_000);
    // Waits of 30 s + CLUSTER_STUCK_WAIT_S + node restarts + 90 s when messages are stranded: the
    // suite's 300 s cut a 4.3 run off before it could report them.
  }, 600_000);
});

/**
 * What the quorum queues of `prefix` hold, by their Raft state machine's own count (rabbit_fifo
 * overview), asked of `node`: it shows messages a queue's message count hides, such as those
 * waiting for at-least-once dead-lettering.
 */
async function quorumOverview(node: PrivateRabbit, prefix: string): Promise<string> {
  const expr =
    '[{rabbit_misc:rs(amqqueue:get_name(Q)), amqqueue:get_pid(Q), catch ra:local_query(amqqueue:get_pid(Q), fun rabbit_fifo:overview/1, 5000)}' +
    ` || Q <- rabbit_amqqueue:list(), amqqueue:get_type(Q) =:= rabbit_quorum_queue, binary:match(element(4, amqqueue:get_name(Q)), <<"${prefix}">>) =/= nomatch].`;
  return node.ctl('-q', 'eval', expr).catch((error: Error) => `eval failed: ${error.message}`);
}

/** Publishes 20 messages every 250 ms through `url` while `going()` holds. */
async function produce(url: string, scenario: FaultScenario, going: () => boolean): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createConfirmChannel();
    const padding = 'x'.repeat(1000);
    while (going()) {
      for (let i = 0; i < 20; i++) {
        const id = `${scenario.config.workQueue}-${scenario.ids.length}`;
        scenario.ids.push(id);
        channel.sendToQueue(scenario.config.workQueue, Buffer.from(JSON.stringify({ id, padding })), { persistent: true, messageId: id });
      }
      await channel.waitForConfirms();
      await sleep(250);
    }
  } finally {
    await connection.close().catch(() => undefined);
  }
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

function summarize(sorted: readonly number[]): { count: number; p50: number; p99: number; max: number } {
  return { count: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] ?? 0 };
}
