import { describe, expect, it } from 'vitest';
import { type Amqp10Outcome, type SettleableDelivery, SettlementWriter } from '../../shared/native/settlement-writer.js';
import { seededRandom } from '../helpers/seeded-random.js';

type Sent = { readonly id: number; readonly outcome: string };

/**
 * A fake rhea session: updates are collected as rhea 3.0.5 collects them (a pass ends in the
 * `process.nextTick` its first update schedules), and each pass is written with a copy of rhea's
 * `write_dispositions`, merge bug included, so `sent` holds the outcome each delivery went out with.
 */
class FakeSession {
  public readonly passes: number[][] = [];
  /** For each pass, whether the output was held (corked) when rhea wrote it. */
  public readonly writtenHeld: boolean[] = [];

  public constructor(private readonly output?: FakeOutput) {}

  public readonly sent = new Map<number, string>();
  private updated: Sent[] = [];

  public delivery(id: number): SettleableDelivery {
    return {
      id,
      accept: () => this.update({ id, outcome: 'accepted' }),
      release: () => this.update({ id, outcome: 'released' }),
      modified: (params) =>
        this.update({ id, outcome: `modified ${params.delivery_failed} ${params.undeliverable_here} ${JSON.stringify(params.message_annotations)}` }),
    };
  }

  private update(entry: Sent): void {
    if (this.updated.length === 0) process.nextTick(() => this.write());
    this.updated.push(entry);
  }

  /** rhea 3.0.5 lib/session.js write_dispositions, with frames replaced by `sent`. */
  private write(): void {
    const deliveries = this.updated;
    this.updated = [];
    this.passes.push(deliveries.map((d) => d.id));
    this.writtenHeld.push((this.output?.held ?? 0) > 0);
    let first: Sent | undefined;
    let last: Sent | undefined;
    let nextId = 0;
    const flush = (): void => {
      for (let id = (first as Sent).id; id <= (last as Sent).id; id++) this.sent.set(id, (first as Sent).outcome);
    };
    for (const delivery of deliveries) {
      if (first === undefined || last === undefined) [first, last, nextId] = [delivery, delivery, delivery.id];
      const equivalent = last.outcome === 'accepted' && delivery.outcome === 'accepted';
      if ((first !== last && !equivalent) || nextId !== delivery.id) {
        flush();
        [first, last, nextId] = [delivery, delivery, delivery.id];
      } else {
        if (last.id !== delivery.id) last = delivery;
        nextId++;
      }
    }
    if (first !== undefined) flush();
  }
}

/** A socket as far as the writer holds it: counts Node's cork depth, and how often it went back to 0 (a write). */
class FakeOutput {
  public held = 0;
  public releases = 0;

  public cork(): void {
    this.held++;
  }

  public uncork(): void {
    if (this.held === 0) throw new Error('uncork without cork');
    if (--this.held === 0) this.releases++;
  }
}

const OUTCOMES: Record<string, Amqp10Outcome> = {
  a: { kind: 'accepted' },
  r: { kind: 'released' },
  m: { kind: 'modified', deliveryFailed: true, undeliverableHere: false, annotations: { 'x-opt-delivery-time': 1_800_000_000_000 } },
  p: { kind: 'modified', deliveryFailed: true, undeliverableHere: true, annotations: { 'x-opt-boomerang-reason': 'parked' } },
};
const SENT: Record<string, string> = {
  a: 'accepted',
  r: 'released',
  m: 'modified true false {"x-opt-delivery-time":1800000000000}',
  p: 'modified true true {"x-opt-boomerang-reason":"parked"}',
};

/** Settles `plan` ('m0 a1': delivery 0 modified, then 1 accepted) in one pass; resolves when flushed. */
async function run(plan: string, writer = new SettlementWriter(), session = new FakeSession()) {
  const steps = plan.split(' ').map((step) => ({ kind: step[0] as string, id: Number(step.slice(1)) }));
  for (const { kind, id } of steps) writer.settle(session.delivery(id), OUTCOMES[kind] as Amqp10Outcome);
  const pendingAfterSettle = writer.pending;
  await writer.flushed();
  return { session, writer, steps, pendingAfterSettle };
}

describe('SettlementWriter', () => {
  it.each([
    { case: 'a retry then a success', plan: 'm0 a1', passes: [[0], [1]] },
    { case: 'a success then a retry', plan: 'a0 m1', passes: [[0], [1]] },
    { case: 'three alternating, retry first', plan: 'm0 a1 m2', passes: [[0, 2], [1]] },
    { case: 'three alternating, success first', plan: 'a0 m1 a2', passes: [[0, 2], [1]] },
    { case: 'two retries with different annotations', plan: 'm0 p1', passes: [[0], [1]] },
    { case: 'two releases', plan: 'r0 r1', passes: [[0], [1]] },
    { case: 'three retries in a row', plan: 'm0 m1 m2', passes: [[0, 2], [1]] },
    { case: 'descending ids', plan: 'a3 m2 a1', passes: [[3, 1], [2]] },
    { case: 'gaps between ids', plan: 'm0 a2 r4 p6', passes: [[0, 2, 4, 6]] },
    { case: 'a run of successes (one merged range)', plan: 'a0 a1 a2 a3 a4', passes: [[0, 1, 2, 3, 4]] },
    { case: 'a retry inside a run of successes', plan: 'a0 a1 m2 a3 a4', passes: [[0, 1, 3, 4], [2]] },
    {
      case: 'a neighbour settled later in the pass',
      plan: 'm5 a9 a4 a6',
      passes: [
        [5, 9],
        [4, 6],
      ],
    },
  ])("settles $case without giving a delivery its neighbour's outcome", async ({ plan, passes }) => {
    // Act
    const { session, steps } = await run(plan);

    // Assess
    expect(session.passes).toEqual(passes);
    for (const { kind, id } of steps) expect(session.sent.get(id)).toBe(SENT[kind]);
  });

  it('gives every delivery its own outcome in 200 random orders (seed 20261125)', async () => {
    // Prepare
    const random = seededRandom(20261125);
    for (let round = 0; round < 200; round++) {
      const ids = Array.from({ length: 12 }, (_, i) => i)
        .filter(() => random() < 0.8)
        .sort(() => random() - 0.5);
      const plan = ids.map((id) => `${'aaamrp'[Math.floor(random() * 6)]}${id}`).join(' ');

      // Act
      const { session, steps } = await run(plan);

      // Assess
      for (const { kind, id } of steps) expect(session.sent.get(id), `${plan}: delivery ${id}`).toBe(SENT[kind]);
    }
  });

  it('has a fake that reproduces the bug: without the writer a success after a retry is retried', async () => {
    // Prepare
    const session = new FakeSession();

    // Act
    session.delivery(0).modified({ delivery_failed: true, undeliverable_here: false, message_annotations: {} });
    session.delivery(1).accept();
    await new Promise((resolve) => setImmediate(resolve));

    // Assess
    expect(session.sent.get(1)).toBe('modified true false {}');
  });

  it('counts held settlements as pending until a later pass gives them to rhea', async () => {
    // Act
    const { writer, pendingAfterSettle } = await run('m0 a1 m2 a3');

    // Assess
    expect(pendingAfterSettle).toBe(2);
    expect(writer.pending).toBe(0);
  });

  it('resolves flushed() at once when nothing was handed to it', async () => {
    // Prepare
    const writer = new SettlementWriter();
    let resolved = false;

    // Act
    void writer.flushed().then(() => (resolved = true));
    await Promise.resolve();

    // Assess
    expect(resolved).toBe(true);
  });

  it('starts a new pass for settlements that come after a pass ended', async () => {
    // Prepare
    const session = new FakeSession();
    const writer = new SettlementWriter();
    await run('m0', writer, session);

    // Act
    await run('a1', writer, session);

    // Assess
    expect(session.passes).toEqual([[0], [1]]);
    expect(session.sent.get(1)).toBe('accepted');
  });

  it('holds the output while rhea writes each pass, and lets it go at the pass end (one write a pass)', async () => {
    // Prepare: a retry between successes takes three passes (the neighbours of m1 wait).
    const output = new FakeOutput();
    const session = new FakeSession(output);
    const writer = new SettlementWriter(output);

    // Act
    await run('a0 m1 a2 a3', writer, session);

    // Assess
    expect(session.passes.length).toBeGreaterThan(1);
    expect(session.writtenHeld.every(Boolean)).toBe(true);
    expect(output.held).toBe(0);
    expect(output.releases).toBe(session.passes.length);
    expect([...session.sent].sort(([a], [b]) => a - b).map(([, outcome]) => outcome)).toEqual([SENT.a, SENT.m, SENT.a, SENT.a]);
  });
});
