/** Bench handler for `invoke --handler`: succeeds at once. Reports the process's peak RSS on exit (stderr). */
import type { Handler } from '../../../shared/message/message.js';

process.on('exit', () => process.stderr.write(`BENCH_MAX_RSS_KB=${process.resourceUsage().maxRSS}\n`));

export const handle: Handler = () => undefined;
