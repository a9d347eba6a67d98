import { topologyOptionsFromConfig } from '../config/config.js';
import { UsageError } from '../errors.js';
import { pullScheduleMs } from '../queues/deploy-options.js';
import { formatDuration, type RetryTimeline, retryTimeline } from '../topology/retry-timeline.js';
import { parseCli } from './args.js';
import { type CliCommand, sameInThisRepository } from './command.js';
import { overrideNote, type QueueTarget, queueTargets } from './queue-flags.js';

const USAGE = `Usage: boomerang policy [--function <name> | --work-queue <name>] [--json]

Prints what a queue's retry policy means in time, without connecting: for a message that keeps
failing, each attempt's delay (and the jitter around it), the delay path that holds it (a tier
rounds the delay up), when it comes due counted from the first attempt, and, for a queue that
deploys the pull function, when a scheduled invocation really takes it: a retry that comes due
between two runs of the schedule waits for the next one.

  --function <name>    a declared queue (default: every declared queue)
  --work-queue <name>  a work queue configured by the environment alone (MAX_RETRIES, BACKOFF_*...)
  --json               one JSON object per queue instead of the table
  -h, --help           this text
${sameInThisRepository('policy')}`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(argv, { function: { type: 'string' }, 'work-queue': { type: 'string' }, json: { type: 'boolean' } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const targets = await queueTargets({ function: values.function, queue: values['work-queue'] }, process.env);
  if (targets.length === 0) throw new UsageError('no queue to show: declare one in functions/, or pass --work-queue <name>');
  process.stderr.write(overrideNote(targets));
  for (const target of targets) {
    const pullEveryMs = target.queue === undefined ? undefined : pullScheduleMs(target.queue.deploy);
    const timeline = retryTimeline(target.config.policy, topologyOptionsFromConfig(target.config), pullEveryMs);
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ queue: target.label, workQueue: target.config.workQueue, pullEveryMs, ...timeline })}\n`
        : `${policyTable(target, timeline, pullEveryMs)}\n`,
    );
  }
  return 0;
}

/** The timeline as a table, with a header line saying what it is of. */
function policyTable(target: QueueTarget, timeline: RetryTimeline, pullEveryMs: number | undefined): string {
  const { config } = target;
  const { policy } = config;
  const modes = target.queue?.deploy.modes ?? [];
  const schedule = pullEveryMs === undefined ? '' : `; pull every ${formatDuration(pullEveryMs)}`;
  const event = modes.includes('event') ? '; event mode takes a retry as it comes due' : '';
  const head = `${target.label} (${config.workQueue}): ${policy.maxRetries} ${policy.maxRetries === 1 ? 'retry' : 'retries'}, then parked in ${config.parkingQueue}; ${config.delayMode} delays${schedule}${event}`;
  const header = ['attempt', 'delay asked (jitter)', 'delay given', 'waits in', 'comes due', ...(pullEveryMs === undefined ? [] : ['pull takes it'])];
  const rows = timeline.attempts.map((a) => [
    String(a.attempt),
    a.attempt === 1 ? '-' : `${formatDuration(a.delayMs)} (${formatDuration(a.jitterMs[0])}–${formatDuration(a.jitterMs[1])})`,
    a.attempt === 1 ? '-' : formatDuration(a.pathDelayMs),
    a.attempt === 1 ? 'first delivery' : a.via,
    formatDuration(a.atMs),
    ...(pullEveryMs === undefined ? [] : [formatDuration(a.pullAtMs ?? 0)]),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  const parked =
    `parked when attempt ${timeline.attempts.length} fails: ${formatDuration(timeline.parkedAtMs)} after the first attempt` +
    (timeline.parkedPullAtMs === undefined ? '' : ` (pull: ${formatDuration(timeline.parkedPullAtMs)})`) +
    '; each attempt also takes its handler time' +
    (pullEveryMs === undefined ? '' : ', and a pull invocation still taking messages when a retry comes due takes it sooner');
  return [head, line(header), ...rows.map(line), parked].join('\n');
}

const policyCommand: CliCommand = {
  name: 'policy',
  summary: "what a queue's retry policy means in time: each attempt's delay, its delay path, and when a scheduled pull really takes it",
  usage: USAGE,
  run: main,
};

export { policyCommand };
