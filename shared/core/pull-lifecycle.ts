import { Lifecycle } from './attempt.js';
import type { ModeSettings } from './mode-settings.js';
import type { PauseStart } from './queue-pause.js';
import type { PullOptions } from './pull-options.js';
import type { Tally } from './tally.js';
import { noMetrics } from '../observability/metrics.js';

/**
 * The lifecycle of one pull invocation's messages, built once for both engines that take them
 * (pull/pull-loop.ts over 0-9-1, native/native-loop.ts over AMQP 1.0): they differ only in their
 * settings and, for native, where the retry count travels.
 * @example const lifecycle = pullLifecycle(options, { settings, tally, stopTakingAt, hardStopAt });
 */
function pullLifecycle(
  options: PullOptions,
  parts: {
    readonly settings: ModeSettings;
    readonly tally: Tally;
    readonly stopTakingAt: number;
    readonly hardStopAt: number;
    readonly retryHeader?: string;
    /** Told each pause a handler's answer starts or extends (the invocation marks it). */
    readonly onPause?: (pause: PauseStart) => void;
  },
): Lifecycle {
  const { config } = options;
  return new Lifecycle({
    config: parts.retryHeader === undefined ? config : { ...config, retryHeader: parts.retryHeader },
    handler: options.handler,
    guard: options.idempotency,
    settings: parts.settings,
    log: options.log,
    metrics: options.metrics ?? noMetrics,
    random: options.random ?? Math.random,
    tally: parts.tally,
    stopAt: parts.stopTakingAt,
    hardStopAt: parts.hardStopAt,
    pacer: options.pacer,
    onPause: parts.onPause,
  });
}

export { pullLifecycle };
