/**
 * Names and level count of the `exact` delay mode. Names carry R and L, so two configurations with
 * another resolution or level count never share queues whose patterns differ:
 * `boomerang.delay.1000ms.L12.level-00` .. `level-11`, `boomerang.delay.1000ms.L12.deliver`, and
 * `boomerang.delay.unroutable` (one keeper per prefix).
 */
import { ConfigError } from '../errors.js';
import type { TopologyOptions } from './types.js';

type ExactOptions = Pick<TopologyOptions, 'delayResolutionMs' | 'maxDelayMs' | 'exactNamePrefix'>;

const DEFAULT_EXACT_NAME_PREFIX = 'boomerang.delay';

/** The number of levels L: the smallest L >= 1 with (2^L - 1) * R >= maxDelayMs. */
function exactLevelCount(options: ExactOptions): number {
  const { delayResolutionMs: resolutionMs, maxDelayMs } = options;
  for (const [name, value] of [
    ['delayResolutionMs', resolutionMs],
    ['maxDelayMs', maxDelayMs],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new ConfigError(`Expected \`${name}\` to be a positive integer, got ${value}`);
    }
  }
  let levels = 1;
  while ((2 ** levels - 1) * resolutionMs < maxDelayMs) levels += 1;
  return levels;
}

/** `boomerang.delay.${R}ms.L${L}`: the family all level names share. */
function familyName(options: ExactOptions): string {
  const prefix = options.exactNamePrefix ?? DEFAULT_EXACT_NAME_PREFIX;
  return `${prefix}.${options.delayResolutionMs}ms.L${exactLevelCount(options)}`;
}

/**
 * The exchange and queue (same name) of level `level`.
 * @example
 * exactLevelName({ delayResolutionMs: 1000, maxDelayMs: 3_600_000 }, 3) // 'boomerang.delay.1000ms.L12.level-03'
 */
function exactLevelName(options: ExactOptions, level: number): string {
  return `${familyName(options)}.level-${String(level).padStart(2, '0')}`;
}

/** The topic exchange where level 0 ends and every work queue is bound. */
function exactDeliveryExchangeName(options: ExactOptions): string {
  return `${familyName(options)}.deliver`;
}

/** The fanout exchange and queue (same name) that keep messages whose work queue is gone. */
function exactUnroutableName(options: ExactOptions): string {
  return `${options.exactNamePrefix ?? DEFAULT_EXACT_NAME_PREFIX}.unroutable`;
}

export { exactDeliveryExchangeName, exactLevelCount, exactLevelName, exactUnroutableName };
export type { ExactOptions };
