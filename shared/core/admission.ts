/**
 * What is read and checked of a delivery before any handler may see it: its retry count (with a
 * warning when the header cannot be used), the warnings of an event record's unusable fields, and
 * whether it is parked untried: an event record that could not be decoded, or a message in a crash
 * loop (core/crash-loop.ts). Pure but for the warnings it logs; the lifecycle (core/attempt.ts) acts on it.
 */
import type { Config } from '../config/config.js';
import type { Delivery } from '../message/copy-message.js';
import { readBrokerCount, readRetryNo } from '../message/headers.js';
import type { Logger } from '../observability/logger.js';
import type { ErrorFacts } from '../retry/decide-retry.js';
import { checkCrashLoop, crashLoopError } from './crash-loop.js';
import type { Origin } from './lifecycle-options.js';
import type { ModeSettings } from './mode-settings.js';
import { RECORDED_FAILURE } from './recorded-failures.js';

/** What the crash-loop check reads besides the delivery: the limit, and what the mode counts. */
type AdmissionRules = {
  readonly config: Pick<Config, 'crashLoopLimit'>;
  readonly settings: Pick<ModeSettings, 'ownReturnsHeader' | 'countsAcquired'>;
};

/** Why a delivery is parked before any handler sees it. */
type ParkUntried = {
  readonly error: ErrorFacts;
  readonly reason: string;
  /** A crash loop (the lifecycle counts those it parked: one per invocation, core/crash-loop.ts). */
  readonly crashLoop: boolean;
};

/**
 * The delivery's retry count; a header that cannot be read counts 0 and is warned of, as are an event
 * record's unusable fields.
 * @example retryNoOf(delivery, { queue: 'orders' }, config, log) // 2
 */
function retryNoOf(delivery: Delivery, origin: Origin, config: Pick<Config, 'retryHeader'>, log: Logger): number {
  const reading = readRetryNo(delivery.properties.headers, config.retryHeader);
  if (reading.warning !== undefined) log.warn(reading.warning, { messageId: delivery.properties.messageId, queue: origin.queue });
  if (origin.notes !== undefined && origin.notes.length > 0)
    log.warn('event message has unusable fields', { messageId: delivery.properties.messageId, queue: origin.queue, warnings: origin.notes });
  return reading.retryNo;
}

/**
 * Why the delivery is parked untried, or undefined when a handler may see it.
 * @param crashLoopsParked the crash loops the invocation parked so far
 * @param rules made once per invocation: this runs for every message
 * @example parkUntried(delivery, { queue: 'orders', problem: 'body is not base64' }, 0, { config, settings })
 * // { error: { name: 'EventDecodeError', ... }, reason: 'undecodable event message: body is not base64', crashLoop: false }
 */
function parkUntried(delivery: Delivery, origin: Origin, crashLoopsParked: number, rules: AdmissionRules): ParkUntried | undefined {
  if (origin.problem !== undefined) {
    const error: ErrorFacts = { name: RECORDED_FAILURE.undecodable, message: origin.problem, retryable: false, retryAfterMs: undefined };
    return { error, reason: `undecodable event message: ${origin.problem}`, crashLoop: false };
  }
  const { ownReturnsHeader, countsAcquired } = rules.settings;
  const { headers } = delivery.properties;
  const ownReturns = ownReturnsHeader === undefined ? 0 : (readBrokerCount(headers, ownReturnsHeader) ?? 0);
  const crashLoop = checkCrashLoop(headers, rules.config.crashLoopLimit, crashLoopsParked, { ownReturns, acquired: countsAcquired });
  if (crashLoop.kind !== 'park') return undefined;
  return { error: crashLoopError(crashLoop, rules.config.crashLoopLimit), reason: crashLoop.reason, crashLoop: true };
}

export { parkUntried, retryNoOf };
export type { AdmissionRules };
