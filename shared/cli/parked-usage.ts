/** The usage texts of `boomerang parked` and of each of its commands (list, groups, show, replay, purge). */
import { FILTER_USAGE } from '../parked/filter-flags.js';
import { sameInThisRepository } from './command.js';

/** The flags that pick the parking lot, common to every command. */
const QUEUE_USAGE = `  --function <name>       the parking lot of this queue declared in functions/ (as its file and the
                          environment configure it); optional when one queue is declared
  --parking-queue <name>  a parking queue by its name (without --function: PARKING_QUEUE, else
                          <WORK_QUEUE>.parked, when either is set)
  --remote <function>     run the command through the operator function of this name or ARN (in the
                          broker's network), with your AWS credentials; --function then picks among
                          the queues it serves (docs/operations.md)`;

const USAGE = `Usage: boomerang parked list|groups|show|replay|purge [options] [--functions-dir <dir>]

The parking lot of a work queue, on the broker in AMQP_URL: see what failed and why, put it back.
--function <name> picks a queue declared in functions/ (the folder is --functions-dir, else
BOOMERANG_FUNCTIONS_DIR when set); without it, the only declared queue, unless WORK_QUEUE or
PARKING_QUEUE names another (with several declared, say which).
With --remote <function>, the operator function the CDK construct deploys runs it in the broker's
network (same output). Reading never changes a message: each one read is held, unacked, and given back in its place when
the read ends (nothing is re-published); see docs/operations.md for what the broker counts.

  list               parked messages as a table (or JSON lines), with filters
  groups             parked messages grouped by cause (error, normalised message, source queue)
  show <messageId>   one message: properties, headers and a body preview
  replay             put parked messages back on their source queue
  purge              delete parked messages

Run a command with --help for its options. Exit codes: 0 done, 1 failed (or some messages stayed
parked that were asked for), 2 bad usage (a flag, or an environment variable such as PARKING_QUEUE).
${sameInThisRepository('parked')}`;

const LIST_USAGE = `Usage: boomerang parked list [filters] [--json] [--limit <n>] [--function <name> | --parking-queue <name>]

Prints the parked messages that match: message id, age, attempts, error name, error message (cut)
and routing key. The whole parking lot is read once, whatever --limit says, so that every match is counted.

  --json                  one JSON object per line (full texts) instead of the table
  --limit <n>             print at most <n> rows
${QUEUE_USAGE}

${FILTER_USAGE}`;

const GROUPS_USAGE = `Usage: boomerang parked groups [filters] [--json] [--function <name> | --parking-queue <name>]

Groups the parked messages by cause: error name, error message (numbers, ids, URLs, e-mail
addresses and times collapsed) and source queue. Prints each group's count, first and last park time and a sample, largest first,
then the key that --group takes (list, replay and purge act on exactly that group).

  --json                  one JSON object: { queue, parked, grouped, groups } (what the console shows)
${QUEUE_USAGE}

${FILTER_USAGE}`;

const SHOW_USAGE = `Usage: boomerang parked show <messageId> [--json] [--body-chars <n>] [--function <name> | --parking-queue <name>]

Prints a parked message's properties, headers (error, stack, attempts, park reason, source queue...)
and a body preview, pretty when it is JSON.

  --json                  one JSON object instead of the text
  --body-chars <n>        characters of the body to show (default 4000)
${QUEUE_USAGE}`;

const REPLAY_USAGE = `Usage: boomerang parked replay [filters] [--to <queue>] [--keep-count] [--limit <n>] [--rate <n/s>] [--dry-run] [--function <name> | --parking-queue <name>]

Puts parked messages back on their source queue, one at a time: the boomerang-source-queue header
when it names the work queue of this parking lot (or the queue the broker dead-lettered the message
from), else the broker's own record (x-death). A header naming any other queue is not followed: that
message stays parked and is named (use --to). Before sending, it says how many go to each queue. Each
is published with a confirm before its parked copy is acked, so a crash duplicates at most one message
and loses none. The park headers go; the original exchange and routing key headers, the trace context
and the team's headers stay. Messages whose queue does not exist stay parked.

  --to <queue>            send them to this queue instead
  --keep-count            keep the retry count (default: start over at 0 retries)
  --limit <n>             replay at most <n>
  --rate <n>[/s|/m]       at most <n> messages per second (or minute), so a replay is no storm
  --dry-run               say what would be replayed; publish and delete nothing
${QUEUE_USAGE}

${FILTER_USAGE}`;

const PURGE_USAGE = `Usage: boomerang parked purge [filters] [--limit <n>] [--dry-run] [--yes] [--function <name> | --parking-queue <name>]

Deletes the parked messages that match; the others stay parked, in order. For retention, run it
on a schedule with --older-than <age> --yes (say, --older-than 14d), or set deploy.retention in the
queue's file and the stack runs it for you. On a terminal it counts
them first (a read that leaves the parking lot as it was) and asks; without a terminal, --yes is required.

  --limit <n>             delete at most <n>
  --dry-run               count what would be deleted; delete nothing
  --yes                   do not ask
${QUEUE_USAGE}

${FILTER_USAGE}`;

/** Each command's usage, by name. */
const USAGES: Readonly<Record<string, string>> = { list: LIST_USAGE, groups: GROUPS_USAGE, show: SHOW_USAGE, replay: REPLAY_USAGE, purge: PURGE_USAGE };

/** The usage to show after a usage error: the command's own when the arguments name one. */
function parkedUsageFor(argv: readonly string[]): string {
  return USAGES[argv[0] ?? ''] ?? USAGE;
}

export { GROUPS_USAGE, LIST_USAGE, parkedUsageFor, PURGE_USAGE, REPLAY_USAGE, SHOW_USAGE, USAGE };
