import { BrokerCtl } from './broker-ctl.js';

/** The names of the queues and exchanges of the tests' vhost at one moment. */
type BrokerNames = { readonly queues: ReadonlySet<string>; readonly exchanges: ReadonlySet<string> };

/**
 * What a run left behind (pure): the queues and exchanges in `after` that were not in `before` and
 * carry one of `made`, the names this run's `uniqueName` gave (`test-work-1a2b3c4d`, also inside
 * `test-work-1a2b3c4d.delay.200ms` or `boomerang.demo.test-local-1a2b3c4d.parked`), as
 * `queue <name>` / `exchange <name>`, sorted. New since the start and named by this run: leftovers of
 * an earlier run, and the objects of a run beside it on the same broker, are not blamed.
 * @example leftovers(empty, { queues: new Set(['test-w-1a2b3c4d.parked']), exchanges: new Set() }, ['test-w-1a2b3c4d']) // ['queue test-w-1a2b3c4d.parked']
 */
function leftovers(before: BrokerNames, after: BrokerNames, made: readonly string[]): string[] {
  const ours = (name: string): boolean => made.some((own) => name === own || name.includes(`${own}.`));
  const added = (kind: 'queue' | 'exchange', was: ReadonlySet<string>, now: ReadonlySet<string>): string[] =>
    [...now]
      .filter((name) => !was.has(name) && ours(name))
      .sort()
      .map((name) => `${kind} ${name}`);
  return [...added('queue', before.queues, after.queues), ...added('exchange', before.exchanges, after.exchanges)];
}

/** The lines of a `rabbitmqctl --quiet --no-table-headers list_*` output, as names. */
function namesOf(output: string): Set<string> {
  return new Set(
    output
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== ''),
  );
}

/** The queues and exchanges of vhost `/` on the node that serves AMQP_URL, read with rabbitmqctl. */
async function listBrokerNames(ctl: BrokerCtl = BrokerCtl.forUrl()): Promise<BrokerNames> {
  const list = (what: 'list_queues' | 'list_exchanges'): Promise<string> => ctl.ctl(['--quiet', '--no-table-headers', what, '-p', '/', 'name']);
  const [queues, exchanges] = await Promise.all([list('list_queues'), list('list_exchanges')]);
  return { queues: namesOf(queues), exchanges: namesOf(exchanges) };
}

export { leftovers, listBrokerNames, namesOf };
export type { BrokerNames };
