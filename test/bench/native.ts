/**
 * The bench's `native` section (`delayMode: 'native'`, RabbitMQ 4.3+): throughput of the success and
 * retry paths (native-throughput.ts), delay accuracy (delay-accuracy.ts, the native mode next to the
 * per-message-expiration anchor) and the native bundle's cold start (native-cold-start.ts), each next
 * to its anchor in the same run. On an older broker every row is "not measured", saying why: the broker
 * cannot delay a message natively. A part that fails gives its own "not measured" row; the others stay.
 */
import { nativeBrokerRefusal } from '../../shared/topology/native-broker.js';
import type { BenchBroker } from './bench-broker.js';
import { delayAccuracy } from './delay-accuracy.js';
import { nativeColdStart } from './native-cold-start.js';
import { nativeThroughput } from './native-throughput.js';
import type { Row } from './report.js';
import { brokerVersion } from './results-files.js';

type NativeOptions = {
  readonly broker: BenchBroker;
  readonly messages: number;
  readonly rounds: number;
  readonly delayMessages: number;
  readonly delayMaxMs: number;
  readonly seed: number;
  readonly coldStarts: number;
  readonly progress: (line: string) => void;
  /** See ThroughputOptions. @default none */
  readonly baseline?: string;
};

const PARTS = ['throughput', 'delay', 'cold start'] as const;

function notMeasured(part: string, why: string): Row {
  return { section: 'native', metric: part, boomerang: why, anchor: '-', ratio: '-', target: '-', verdict: 'not measured' };
}

async function nativeSection(options: NativeOptions): Promise<{ result: Record<string, unknown>; rows: Row[] }> {
  const { broker, progress } = options;
  const refusal = nativeBrokerRefusal(brokerVersion(broker.serverVersion));
  if (refusal !== undefined) {
    const why = `skipped: ${refusal.message.split(':')[0]}`;
    progress(`  ${why}`);
    return { result: { skipped: why }, rows: PARTS.map((part) => notMeasured(part, why)) };
  }
  const runs: Record<(typeof PARTS)[number], () => Promise<{ result: unknown; rows: Row[] }>> = {
    throughput: () =>
      nativeThroughput({ broker, messages: options.messages, rounds: options.rounds, queueType: 'quorum', progress, baseline: options.baseline }),
    delay: () => {
      progress(`  delay: seed ${options.seed} (rerun with --seed ${options.seed})`);
      return delayAccuracy({
        broker,
        messages: options.delayMessages,
        minMs: 1000,
        maxMs: options.delayMaxMs,
        seed: options.seed,
        progress,
        modes: ['native'],
      });
    },
    'cold start': () => nativeColdStart({ broker, runs: options.coldStarts, progress }),
  };
  const result: Record<string, unknown> = {};
  const rows: Row[] = [];
  for (const part of PARTS) {
    progress(`  -- native ${part}`);
    try {
      const done = await runs[part]();
      result[part] = done.result;
      rows.push(...done.rows);
    } catch (error) {
      progress(`  native ${part} failed: ${(error as Error).stack ?? String(error)}`);
      result[part] = { error: (error as Error).message };
      rows.push(notMeasured(part, `failed: ${(error as Error).message.slice(0, 200)}`));
    }
  }
  return { result, rows };
}

export { nativeSection };
