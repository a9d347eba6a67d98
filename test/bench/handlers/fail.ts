/** Bench handler for `invoke --handler`: always throws a retryable error. Reports peak RSS on exit (stderr). */
import type { Handler } from '../../../shared/message/message.js';

process.on('exit', () => process.stderr.write(`BENCH_MAX_RSS_KB=${process.resourceUsage().maxRSS}\n`));

export const handle: Handler = () => {
  throw new Error('partner down');
};
