/**
 * An in-memory transport for the invocation engine (shared/core/invocation.ts), in the shape of each
 * mode: `pull` (a consumer with a prefetch window of BATCH_SIZE, MAX_MESSAGES, copies confirmed later),
 * `event` (a finite batch, received at open, each record holding its turn until settled, a failed copy
 * losing the whole batch) and `native` (the retry count in an annotation, settled at once). It records
 * every settle and every call of the end sequence in order, and runs on vitest's fake clock: no broker,
 * no network, no real wait.
 */
import type { MessageProperties } from 'amqplib';
import { afterEach, beforeEach, vi } from 'vitest';
import type { PauseMarker, PauseStart } from '../../shared/amqp/pause-marker.js';
import { type Config, loadConfig, topologyOptionsFromConfig } from '../../shared/config/config.js';
import { type InvocationOptions, runInvocation } from '../../shared/core/invocation.js';
import type { Deadlines, OpenTransport, Taken, Transport } from '../../shared/core/transport.js';
import type { Origin } from '../../shared/core/lifecycle-options.js';
import { eventSettings, type ModeSettings, nativeSettings, pullSettings } from '../../shared/core/mode-settings.js';
import { readPause } from '../../shared/core/pause.js';
import type { FailureReason, Tally } from '../../shared/core/tally.js';
import type { Verdict } from '../../shared/core/verdict.js';
import { RetryableError, UnrecoverableError } from '../../shared/errors.js';
import type { Delivery } from '../../shared/message/copy-message.js';
import type { Handler } from '../../shared/message/message.js';
import { NativeAnnotation } from '../../shared/native/native-annotations.js';
import { silentLogger } from './fakes.js';
import type { Outcome, StopReason, Summary } from '../../shared/observability/summary.js';
import { recordingLogger } from './fakes.js';

type Mode = 'pull' | 'event' | 'native';

const MODES: readonly Mode[] = ['pull', 'event', 'native'];

/** Where the fake clock starts: 2026-01-01T00:00:00Z. */
const T0 = Date.UTC(2026, 0, 1);

/** Runs each test of the calling file on vitest's fake clock, starting at `T0`. */
function useFakeClock(): void {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
}

/** A delivery `id` (its messageId), with `headers` and a `body`. */
function delivery(id: string, headers: Record<string, unknown> = {}, body = `{"id":"${id}"}`): Delivery {
  return {
    content: Buffer.from(body),
    fields: { exchange: '', routingKey: 'orders' },
    properties: { headers, messageId: id, type: undefined } as unknown as MessageProperties,
  };
}

/** `count` deliveries `m-0`, `m-1`... */
function deliveries(count: number, headers: Record<string, unknown> = {}): Delivery[] {
  return Array.from({ length: count }, (_, i) => delivery(`m-${i}`, headers));
}

/** The messageId of a delivery: how the records below name it. */
function idOf(taken: Taken | Delivery): string {
  const { properties } = 'delivery' in taken ? taken.delivery : taken;
  return String(properties.messageId);
}

/** A queue's pause marker: its reads and writes are recorded; `pausedUntil` is what a read finds. */
class FakePauseMarker implements PauseMarker {
  public reads = 0;
  /** Each write: the pause, as the marker's body says it (`reason` is the error's name, `by` the function). */
  public readonly writes: Array<{ untilMs: number; reason: string; by: string }> = [];

  /** When each write (in `writes`) was confirmed, epoch ms. */
  public readonly written: number[] = [];

  /** `behaviour`: a read or a write that fails with this error; a write confirmed after `writeMs` (fake clock). */
  public constructor(
    public readonly queue: string,
    public pausedUntil: number | undefined = undefined,
    private readonly behaviour: { readonly read?: Error; readonly write?: Error; readonly writeMs?: number } = {},
  ) {}

  public async read(): Promise<number | undefined> {
    this.reads++;
    if (this.behaviour.read !== undefined) throw this.behaviour.read;
    return this.pausedUntil;
  }

  public async write(pause: PauseStart, by: string): Promise<void> {
    const mark = { untilMs: pause.untilMs, reason: pause.errorName, by };
    this.writes.push(mark);
    if (this.behaviour.writeMs !== undefined) await new Promise((resolve) => setTimeout(resolve, this.behaviour.writeMs));
    if (this.behaviour.write !== undefined) throw this.behaviour.write;
    this.pausedUntil = mark.untilMs;
    this.written.push(Date.now());
  }
}

/** The error `failed` hands the engine to throw: the transport's reason and the summary. */
class MemoryTransportError extends Error {
  public constructor(
    message: string,
    public readonly reason: FailureReason,
    public readonly summary: Summary,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'MemoryTransportError';
  }
}

type MemoryTransportOptions = {
  readonly mode: Mode;
  readonly config: Config;
  /** What is in the queue (pull, native) or the batch (event) at the start; a `Taken` brings its own origin. */
  readonly messages?: ReadonlyArray<Delivery | Taken>;
  /** Pull: whether a give-back raises `x-delivery-count` (a 3.10 broker; false: 4.3). @default true */
  readonly giveBackCounts?: boolean;
  /** Overrides the mode's settings (a pull queue without a delay path, say). */
  readonly settings?: Partial<ModeSettings>;
  /** The work queue's pause marker. @default one that finds no pause */
  readonly marker?: FakePauseMarker;
  /** The copy of this settle fails with the error returned (pull and event: a retry, park, defer; event: a give-back too). */
  readonly failCopy?: (taken: Taken, verdict: Verdict) => Error | undefined;
  /** Copies wait for `confirm()` instead of being confirmed on the next turn. @default false */
  readonly holdCopies?: boolean;
  /** `finish` fails with this error. @default none */
  readonly finishFails?: Error;
  /** What `completed` answers. @default none */
  readonly completed?: (summary: Summary) => Error | undefined;
};

/** One settle the engine asked for. */
type SettleRecord = { readonly id: string; readonly verdict: Verdict; readonly at: number };

/** A copy awaiting its confirm. */
type Copy = { readonly taken: Taken; readonly outcome: Outcome; readonly error: Error | undefined; readonly confirmed: () => void };

class MemoryTransport implements Transport {
  public readonly settings: ModeSettings;
  public readonly retryHeader: string | undefined;
  public readonly maxMessages: number;
  public readonly settleHoldsTurn: boolean;
  /** Every settle asked for, in order, including any the transport refused (already settled, or lost). */
  public readonly settles: SettleRecord[] = [];
  /** The calls of the end sequence and the settles, in order: `settle m-1 ack`, `stopTaking`, `finish`, `close`... */
  public readonly events: string[] = [];
  /** When each of `events` happened, epoch ms. */
  private readonly times: number[] = [];
  /** Ids given back by `finish` (pull: what was taken and never settled). */
  public readonly givenBackAtFinish: string[] = [];
  /** Deadlines the engine opened the transport with. */
  public deadlines: Deadlines | undefined;
  /** The markers the engine asked for, by queue (the work queue's is `options.marker`). */
  public readonly markers = new Map<string, FakePauseMarker>();
  private readonly broken = new AbortController();
  /** Pull, native: still on the broker, beyond the prefetch window. Event: the batch not yet taken. */
  private readonly queue: Taken[];
  /** Pull, native: delivered to the consumer, not yet taken. */
  private readonly buffer: Taken[] = [];
  /** Taken, not yet settled (pull: the ledger's open deliveries). */
  private readonly open = new Set<Delivery>();
  private readonly copies: Copy[] = [];
  private readonly pending = new Set<Promise<void>>();
  private waiter: ((taken: Taken | undefined) => void) | undefined;
  private waitTimer: ReturnType<typeof setTimeout> | undefined;
  private tallied: Tally | undefined;
  private lateArrivals: Taken[] = [];
  private cancelled = false;
  private stopped = false;
  private exhausted = false;
  private copyFailure: Error | undefined;

  public readonly config: Config;

  public constructor(private readonly options: MemoryTransportOptions) {
    const { mode, config } = options;
    this.config = config;
    const topology = topologyOptionsFromConfig(config);
    const modeSettings =
      mode === 'event'
        ? eventSettings(topology)
        : mode === 'native'
          ? nativeSettings(NativeAnnotation.failedSettlements)
          : pullSettings(config, topology, options.giveBackCounts === false ? { major: 4, minor: 3 } : { major: 3, minor: 10 });
    this.settings = { ...modeSettings, ...options.settings };
    this.retryHeader = mode === 'native' ? NativeAnnotation.retryNo : undefined;
    this.maxMessages = mode === 'event' ? Number.POSITIVE_INFINITY : config.maxMessages;
    this.settleHoldsTurn = mode === 'event';
    this.queue = (options.messages ?? []).map((message) => this.taken(message));
    const marker = options.marker ?? new FakePauseMarker(config.workQueue);
    this.markers.set(marker.queue, marker);
  }

  /** The transport's opener: what `runInvocation` is given. Reads the pause marker as each mode does. */
  public opener(): OpenTransport {
    return async ({ tally, deadlines }) => {
      this.tallied = tally;
      this.deadlines = deadlines;
      this.note('open');
      if (this.options.mode === 'event') {
        tally.receive(this.queue.length);
        if (this.queue.length === 0) return { transport: undefined, pausedUntil: undefined };
      }
      const pausedUntil = await readPause(this.markerOf(this.options.config.workQueue), silentLogger);
      // Pull and native attach nothing while paused; an event batch is already taken, and deferred.
      if (pausedUntil !== undefined && this.options.mode !== 'event') return { transport: undefined, pausedUntil };
      this.refill();
      return { transport: this, pausedUntil, markerOf: (queue: string) => this.markerOf(queue) };
    };
  }

  public get lost(): AbortSignal {
    return this.broken.signal;
  }

  public get outstanding(): number {
    return this.options.mode === 'event' ? 0 : this.open.size;
  }

  /** When `event` (of `events`) first happened, in ms since the transport was opened; undefined if it never did. */
  public timeOf(event: string): number | undefined {
    const index = this.events.indexOf(event);
    return index < 0 ? undefined : (this.times[index] as number) - (this.times[0] as number);
  }

  /** Whether the engine closed the transport. */
  public get closed(): boolean {
    return this.events.includes('close');
  }

  /** What is still on the broker: never delivered to the consumer. */
  public get leftInQueue(): string[] {
    return this.queue.map(idOf);
  }

  /** The verdict settled for `id` (the first, if several were asked for). */
  public verdictOf(id: string): Verdict | undefined {
    return this.settles.find((settle) => settle.id === id)?.verdict;
  }

  /** Each settle as `id kind`, in order. */
  public settled(): string[] {
    return this.settles.map((settle) => `${settle.id} ${settle.verdict.kind}`);
  }

  /** Messages arrive on the queue now (pull, native: a waiting take gets the first at once). */
  public arrive(...messages: Delivery[]): void {
    this.queue.push(...messages.map((message) => this.taken(message)));
    this.refill();
  }

  /** Messages the broker sends after the engine's `stopTaking` began, before its cancel-ok: that call resolves with them. */
  public arriveWhileStopping(...messages: Delivery[]): void {
    this.lateArrivals.push(...messages.map((message) => this.taken(message)));
  }

  /** The broker cancels the consumer: a waiting take ends with nothing. */
  public cancel(): void {
    this.cancelled = true;
    this.endWait(undefined);
  }

  /** The connection breaks with `error`. */
  public lose(error: Error): void {
    this.broken.abort(error);
    this.endWait(undefined);
  }

  /** Confirms the copies held so far (`holdCopies`), in order; returns how many. */
  public confirm(): number {
    const held = this.copies.splice(0);
    for (const copy of held) copy.confirmed();
    return held.length;
  }

  public async take(waitMs: number): Promise<Taken | undefined> {
    if (this.options.mode === 'event') {
      const next = this.queue.shift();
      if (next === undefined) this.exhausted = true;
      else this.open.add(next.delivery);
      return next;
    }
    if (this.broken.signal.aborted) return undefined;
    const next = this.buffer.shift();
    if (next !== undefined) return this.received(next);
    if (this.cancelled) return undefined;
    const arrived = await new Promise<Taken | undefined>((resolve) => {
      this.waiter = resolve;
      this.waitTimer = setTimeout(() => this.endWait(undefined), Math.max(0, waitMs));
    });
    return arrived === undefined ? undefined : this.received(arrived);
  }

  public ended(): StopReason | undefined {
    if (this.options.mode === 'event') return this.exhausted ? 'idle' : undefined;
    if (this.copyFailure !== undefined) return 'publish-failed';
    return this.cancelled ? 'consumer-cancelled' : undefined;
  }

  public takeBuffered(): Taken[] {
    this.note('takeBuffered');
    if (this.options.mode === 'event') {
      const rest = this.queue.splice(0);
      for (const taken of rest) this.open.add(taken.delivery);
      return rest;
    }
    return this.buffer.splice(0).map((taken) => this.received(taken));
  }

  public settle(taken: Taken, verdict: Verdict): Promise<void> | undefined {
    const id = idOf(taken);
    this.settles.push({ id, verdict, at: Date.now() });
    this.note(`settle ${id} ${verdict.kind}`);
    if (!this.open.has(taken.delivery) || this.broken.signal.aborted) return undefined;
    const outcome = OUTCOME[verdict.kind];
    const { mode } = this.options;
    const copied = mode === 'event' || (mode === 'pull' && COPIED.has(verdict.kind) && !(verdict.kind === 'park' && !verdict.copyable));
    if (!copied) {
      this.count(taken, outcome);
      return undefined;
    }
    const error = this.options.failCopy?.(taken, verdict);
    const work = new Promise<void>((resolve) => {
      const confirmed = (): void => {
        this.copied(taken, outcome, error);
        resolve();
      };
      if (this.options.holdCopies === true) this.copies.push({ taken, outcome, error, confirmed });
      // A broker confirm never arrives in the same turn.
      else void Promise.resolve().then(confirmed);
    });
    this.pending.add(work);
    void work.then(() => this.pending.delete(work));
    return work;
  }

  public async stopTaking(): Promise<Taken[]> {
    this.note('stopTaking');
    this.stopped = true;
    this.endWait(undefined);
    this.buffer.push(...this.lateArrivals.splice(0));
    return this.buffer.splice(0).map((taken) => this.received(taken));
  }

  public async finish(deadlines: Deadlines): Promise<void> {
    this.note('finish');
    if (deadlines !== this.deadlines) throw new Error('finish was given other deadlines than the opener');
    if (this.options.finishFails !== undefined) throw this.options.finishFails;
    const { mode } = this.options;
    // Event: each copy has its own publish timeout; the batch may be acked only once all were confirmed.
    if (mode === 'event') while (this.pending.size > 0) await Promise.all([...this.pending]);
    if (mode === 'pull')
      for (const delivery of [...this.open]) {
        this.givenBackAtFinish.push(idOf(delivery));
        this.open.delete(delivery);
        this.tally.settle('requeued', delivery);
      }
    if (!this.broken.signal.aborted) this.tally.parkedDepth(0);
  }

  public async close(): Promise<void> {
    this.note('close');
    this.endWait(undefined);
    clearTimeout(this.waitTimer);
  }

  public async failed(failure: Error): Promise<{ reason: FailureReason; error: (summary: Summary) => Error }> {
    this.note('failed');
    const { reason: given } = failure as { reason?: unknown };
    const reason: FailureReason =
      this.options.mode === 'event' && this.copyFailure !== undefined
        ? 'publish-failed'
        : given === 'channel-closed' || given === 'publish-failed'
          ? given
          : 'connection-lost';
    return { reason, error: (summary) => new MemoryTransportError(`Invocation ended early: ${failure.message}`, reason, summary, { cause: failure }) };
  }

  public completed(summary: Summary): Error | undefined {
    this.note('completed');
    return this.options.completed?.(summary);
  }

  private note(event: string): void {
    this.events.push(event);
    this.times.push(Date.now());
  }

  private get tally(): Tally {
    if (this.tallied === undefined) throw new Error('the transport was not opened');
    return this.tallied;
  }

  private markerOf(queue: string): FakePauseMarker {
    const known = this.markers.get(queue);
    if (known !== undefined) return known;
    const marker = new FakePauseMarker(queue);
    this.markers.set(queue, marker);
    return marker;
  }

  private taken(message: Delivery | Taken): Taken {
    const origin: Origin = { queue: this.options.config.workQueue };
    return 'delivery' in message ? message : { delivery: message, origin };
  }

  /** Pull, native: handed out by a take, counted as the ledger (or the receiver) counts it. */
  private received(taken: Taken): Taken {
    this.open.add(taken.delivery);
    this.tally.receive();
    this.refill();
    return taken;
  }

  /** Pull, native: the broker sends what the prefetch window (BATCH_SIZE unsettled) has room for. */
  private refill(): void {
    if (this.options.mode === 'event' || this.stopped || this.cancelled || this.broken.signal.aborted) return;
    while (this.queue.length > 0 && this.buffer.length + this.open.size < this.options.config.batchSize) {
      const next = this.queue.shift() as Taken;
      if (this.waiter !== undefined) this.endWait(next);
      else this.buffer.push(next);
    }
  }

  private endWait(taken: Taken | undefined): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    clearTimeout(this.waitTimer);
    waiter?.(taken);
  }

  private count(taken: Taken, outcome: Outcome): void {
    this.open.delete(taken.delivery);
    this.tally.settle(outcome, taken.delivery);
    this.refill();
  }

  /** A copy's confirm came (or its failure): pull gives the original back and stops taking; event loses the batch. */
  private copied(taken: Taken, outcome: Outcome, error: Error | undefined): void {
    if (!this.open.has(taken.delivery)) return;
    if (error === undefined) {
      this.count(taken, outcome);
      return;
    }
    this.copyFailure ??= error;
    if (this.options.mode === 'event') {
      this.open.delete(taken.delivery);
      this.tally.unsettled(taken.delivery, error.message);
      this.broken.abort(error);
      return;
    }
    this.count(taken, 'requeued');
  }
}

/** How the summary counts a settled verdict. */
const OUTCOME: Readonly<Record<Verdict['kind'], Outcome>> = {
  ack: 'acked',
  duplicate: 'skippedDuplicates',
  retry: 'retried',
  park: 'parked',
  defer: 'deferred',
  'give-back': 'requeued',
};

/** The pull verdicts settled by a copy, then an ack. */
const COPIED: ReadonlySet<Verdict['kind']> = new Set(['retry', 'park', 'defer']);

/**
 * Waits for `work` on vitest's fake clock: moves the clock from one timer to the next until `work`
 * ends; throws when `work` waits on something no timer will ever bring.
 */
async function onFakeClock<T>(work: Promise<T>): Promise<T> {
  let done = false;
  const watched = work.finally(() => {
    done = true;
  });
  watched.catch(() => undefined);
  for (let steps = 0; !done; steps++) {
    if (steps > 10_000) throw new Error('onFakeClock: still not done after 10 000 timers');
    const idle = vi.getTimerCount() === 0;
    // Lets every promise reaction run, then fires the next timer, if any.
    await vi.advanceTimersToNextTimerAsync();
    if (!done && idle && vi.getTimerCount() === 0) throw new Error('onFakeClock: the work waits on nothing the clock can move');
  }
  return watched;
}

/**
 * A config for engine tests, through the project's loader: queue `orders`, 3 retries from 1 s without
 * jitter, a 1 s safety margin (a 10 s budget stops taking at 9 s, cuts off at 9.5 s, settles by 9.75 s),
 * a 500 ms idle timeout, BATCH_SIZE 10, CONCURRENCY 4, BREAKER_THRESHOLD 3.
 */
function engineConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    WORK_QUEUE: 'orders',
    MAX_RETRIES: '3',
    BACKOFF_INITIAL_MS: '1000',
    BACKOFF_JITTER: '0',
    SAFETY_MARGIN_MS: '1000',
    IDLE_TIMEOUT_MS: '500',
    BATCH_SIZE: '10',
    CONCURRENCY: '4',
    BREAKER_THRESHOLD: '3',
    ...env,
  });
}

/** How an invocation ended: its summary, or the error it threw (with the summary it carries); and its warnings. */
type Invoked = { readonly summary: Summary; readonly error: Error | undefined; readonly warnings: string[] };

/**
 * Runs one invocation on `transport` with `handler` on the fake clock: a 10 s budget, `random` 0.5 and a
 * recording log unless `options` say otherwise. A thrown error is returned, with the summary it carries.
 */
async function invoke(transport: MemoryTransport, handler: Handler, options: Partial<InvocationOptions> = {}): Promise<Invoked> {
  const logger = recordingLogger('warn');
  const warnings = (): string[] => logger.entries().map((entry) => String(entry.msg ?? entry.message));
  const running = runInvocation(transport.opener(), { config: transport.config, handler, budgetMs: 10_000, log: logger.log, random: () => 0.5, ...options });
  try {
    return { summary: await onFakeClock(running), error: undefined, warnings: warnings() };
  } catch (error) {
    const { summary } = error as { summary?: Summary };
    if (summary === undefined) throw error;
    return { summary, error: error as Error, warnings: warnings() };
  }
}

/** A handler that notes each message id in `seen` and fails as the id says: `fail` retryably, `bad` for good; the rest succeed. */
function byId(seen: string[] = []): Handler {
  return (message) => {
    const id = String(message.properties.messageId);
    seen.push(id);
    if (id === 'fail') throw new RetryableError('HTTP 503');
    if (id === 'bad') throw new UnrecoverableError('bad request');
  };
}

/** Each message taken was settled once: the summary's outcomes add up to what it received. */
function balanced(summary: Summary): boolean {
  const { received, acked, retried, parked, requeued, lost, deferred, skippedDuplicates } = summary;
  return received === acked + retried + parked + requeued + lost + deferred + skippedDuplicates;
}

export { balanced, byId, delivery, deliveries, engineConfig, FakePauseMarker, invoke, MemoryTransport, MemoryTransportError, MODES, T0, useFakeClock };
export type { Mode };
