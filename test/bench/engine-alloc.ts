/**
 * The invocation engine alone, without a broker: `runInvocation` over an in-memory transport shaped as
 * the native one (each delivery converted by `fromAmqp10` from a decoded 1 KiB message, settled at once),
 * a no-op handler, N messages. Prints the engine's client CPU per message and, from V8's sampling heap
 * profiler (objects that died young counted too), the bytes allocated per message and the functions
 * that allocate them. What the bundle contests cannot show on a shared 2-core machine, where the broker's
 * pace drifts by more than the engine's share: a change to the per-message path, measured apart.
 *
 *   npx tsx test/bench/engine-alloc.ts [messages, default 100000]
 *
 * A run of 200 000 messages first warms the code (JIT), and is not counted; the CPU is a run's without the
 * profiler, the bytes the next run's under it.
 */
import { Session } from 'node:inspector/promises';
import { loadConfig } from '../../shared/config/config.js';
import { runInvocation } from '../../shared/core/invocation.js';
import type { Taken, Transport } from '../../shared/core/transport.js';
import { nativeSettings } from '../../shared/core/mode-settings.js';
import type { Tally } from '../../shared/core/tally.js';
import type { Verdict } from '../../shared/core/verdict.js';
import { NativeAnnotation } from '../../shared/native/native-annotations.js';
import { fromAmqp10 } from '../../shared/native/native-delivery.js';
import { silentLogger } from '../helpers/fakes.js';

const messages = Number(process.argv[2] ?? 100_000);
const body = Buffer.alloc(1024, 97);

/** A native-shaped source of `count` messages, each converted as the native transport converts a delivery. */
class InMemoryNative implements Transport {
  public readonly settings = nativeSettings(NativeAnnotation.failedSettlements);
  public readonly retryHeader = NativeAnnotation.retryNo;
  public readonly settleHoldsTurn = false;
  public readonly lost = new AbortController().signal;
  public outstanding = 0;
  private sent = 0;
  private readonly origin = { queue: 'engine-alloc' };

  public constructor(
    private readonly tally: Tally,
    public readonly maxMessages: number,
  ) {}

  public take(): Promise<Taken | undefined> {
    if (this.sent >= this.maxMessages) return Promise.resolve(undefined);
    this.sent++;
    this.outstanding++;
    this.tally.receive();
    const decoded = { body: { typecode: 0x75, content: body }, durable: true, message_annotations: { 'x-exchange': '', 'x-routing-key': 'engine-alloc' } };
    return Promise.resolve({ delivery: fromAmqp10(decoded as never).delivery, origin: this.origin });
  }

  public ended(): 'idle' | undefined {
    return this.sent >= this.maxMessages && this.outstanding === 0 ? 'idle' : undefined;
  }

  public takeBuffered(): Taken[] {
    return [];
  }

  public settle(_taken: Taken, verdict: Verdict): undefined {
    this.outstanding--;
    this.tally.settle(verdict.kind === 'ack' ? 'acked' : 'deferred');
    return undefined;
  }

  public async stopTaking(): Promise<Taken[]> {
    return [];
  }

  public async finish(): Promise<void> {}

  public async close(): Promise<void> {}

  public async failed(): Promise<{ reason: 'connection-lost'; error: () => Error }> {
    return { reason: 'connection-lost', error: () => new Error('not used') };
  }
}

async function run(count: number): Promise<number> {
  const config = loadConfig({
    AMQP_URL: 'amqp://127.0.0.1',
    WORK_QUEUE: 'engine-alloc',
    MAX_MESSAGES: String(count),
    DELAY_MODE: 'native',
    QUEUE_TYPE: 'quorum',
  });
  const summary = await runInvocation(
    async ({ tally }) => ({
      transport: new InMemoryNative(tally, count),
      markerOf: () => ({ queue: 'engine-alloc.pause', read: async () => undefined, write: async () => undefined }),
    }),
    {
      config,
      handler: () => undefined,
      budgetMs: 600_000,
      log: silentLogger,
    },
  );
  return summary.acked;
}

await run(200_000);
const cpuBefore = process.cpuUsage();
const acked = await run(messages);
const cpu = process.cpuUsage(cpuBefore);
const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
await run(messages);
const { profile } = await session.post('HeapProfiler.stopSampling');
type Node = { callFrame: { functionName: string; url: string }; selfSize: number; children: Node[] };
const bytes = new Map<string, number>();
let total = 0;
const walk = (node: Node): void => {
  if (node.selfSize > 0) {
    const { functionName, url } = node.callFrame;
    const where = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/') || '(V8)'}`;
    bytes.set(where, (bytes.get(where) ?? 0) + node.selfSize);
    total += node.selfSize;
  }
  for (const child of node.children) walk(child);
};
walk(profile.head as Node);
console.log(
  `${acked} of ${messages} messages acked; client CPU ${((cpu.user + cpu.system) / messages).toFixed(2)} µs/msg; allocated (a second run, under the heap profiler) ${(total / messages).toFixed(0)} bytes/msg`,
);
for (const [where, size] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${(size / messages).toFixed(0).padStart(7)}  ${where}`);
