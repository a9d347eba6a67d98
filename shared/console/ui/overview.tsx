import { api, type NativeCounts, type Policy } from './api.js';
import { AutoRefresh, href, Loading, Name, Page, Time, useLoad } from './shared.js';

const n = (depth: number | null): string => (depth === null ? 'missing' : String(depth));

/** One queue's line: its name, its role and how many messages it holds; the parking lot's is marked for the tests and the eye. */
function DepthRow({ name, kind, depth, parkedOf }: { name: string; kind: string; depth: number | null; parkedOf?: string }) {
  return (
    <tr class={parkedOf === undefined ? undefined : 'parking'}>
      <td>
        <code>
          <Name text={name} />
        </code>
      </td>
      <td>{kind}</td>
      <td class="num" data-parked={parkedOf}>
        {n(depth)}
      </td>
    </tr>
  );
}

/**
 * The rest of a native work queue's messages, each kind on its own line under its ready ones: those
 * the broker holds until their retry is due, and those a function is handling. Nothing when the
 * management API could not count them (the note under the table says why).
 */
function NativeRows({ of, work, counts }: { of: string; work: string; counts: NativeCounts }) {
  if (counts.kind === 'unknown') return null;
  const rows = [
    {
      kind: `waiting for their delay (retries the broker holds${counts.nextDueIn === null ? '' : `; the next is due in ${counts.nextDueIn}`})`,
      n: counts.delayed,
      attr: 'data-delayed',
    },
    { kind: 'being handled (taken, not settled yet)', n: counts.unacked, attr: 'data-unacked' },
  ];
  return (
    <>
      {rows.map((row) => (
        <tr key={row.attr}>
          <td class="muted" title={work}>
            same queue
          </td>
          <td>{row.kind}</td>
          <td class="num" {...{ [row.attr]: of }}>
            {row.n}
          </td>
        </tr>
      ))}
    </>
  );
}

/**
 * The retry policy as a plot: a dot where each attempt comes due after the first failure (top row),
 * and, with a pull schedule, where a scheduled run takes it (bottom row), on one time axis from the
 * first attempt to the park. The same figures as `boomerang policy`, in its words as the label.
 */
function PolicyPlot({ name, policy }: { name: string; policy: Policy }) {
  const width = 560;
  const pad = 8;
  const last = policy.attempts[policy.attempts.length - 1];
  const end = Math.max(1, last?.pullAtMs ?? 0, last?.atMs ?? 0);
  const x = (ms: number): number => pad + (ms / end) * (width - 2 * pad);
  const pull = policy.pullEvery !== null;
  const words = policy.attempts.map((a) => `attempt ${a.attempt}: due ${a.due}${a.pull === null ? '' : `, a pull run takes it at ${a.pull}`}`).join('; ');
  const label = `Retry timing of ${name}: ${words}; parked when the last fails, ${policy.parkedAfter} after the first attempt${policy.parkedAfterPull === null ? '' : ` (${policy.parkedAfterPull} on the pull schedule, every ${policy.pullEvery})`}`;
  return (
    <figure class="policy" data-policy={name}>
      <svg role="img" aria-label={label} width={width} height={pull ? 44 : 24} viewBox={`0 0 ${width} ${pull ? 44 : 24}`}>
        <title>{label}</title>
        <line class="axis" x1={pad} x2={width - pad} y1={12} y2={12} />
        {pull && <line class="axis" x1={pad} x2={width - pad} y1={32} y2={32} />}
        {policy.attempts.map((a) => (
          <g key={a.attempt}>
            {pull && a.pullAtMs !== null && <line class="wait" x1={x(a.atMs)} y1={12} x2={x(a.pullAtMs)} y2={32} />}
            <circle class="due" cx={x(a.atMs)} cy={12} r={3} />
            {pull && a.pullAtMs !== null && <circle class="pull" cx={x(a.pullAtMs)} cy={32} r={3} />}
          </g>
        ))}
      </svg>
      <figcaption>
        {policy.attempts.length} attempt(s), parked {policy.parkedAfter} after the first
        {policy.parkedAfterPull === null ? '' : `; on its pull schedule (every ${policy.pullEvery}), ${policy.parkedAfterPull}`}
        {pull ? ' (top: when each comes due; bottom: when a scheduled pull takes it)' : ' (each dot: when an attempt comes due)'}.{' '}
        <code>boomerang policy --function {name}</code> prints it.
      </figcaption>
    </figure>
  );
}

/** How often the overview reads the depths again while its switch is on. */
const REFRESH_MS = 5000;

/**
 * Each queue: the parking lot first (what an operator comes for), the work queue, the delay queues
 * that hold something, and the empty ones folded into one line; parked count and the oldest parked
 * message. A native work queue holds its own retries: its ready, delayed and unacked messages apart.
 * A queue without topology says which of its queues are missing and the command that declares them.
 * Read again every few seconds until that is turned off.
 */
function OverviewView() {
  const { data, error, reload } = useLoad(() => api.overview(), []);
  if (data === undefined)
    return (
      <Page title="Overview">
        <Loading error={error} what="the queues" />
      </Page>
    );
  return (
    <Page title="Overview">
      <p class="muted">
        Broker: <code>{data.broker}</code> ·{' '}
        <button type="button" onClick={reload}>
          Refresh
        </button>{' '}
        · <AutoRefresh everyMs={REFRESH_MS} reload={reload} />
      </p>
      {data.queues.map((q) => {
        const held = q.delays.filter((d) => d.depth !== 0);
        const empty = q.delays.filter((d) => d.depth === 0);
        return (
          <section key={q.name} aria-labelledby={`q-${q.name}`}>
            <h2 id={`q-${q.name}`}>{q.name}</h2>
            <table>
              <thead>
                <tr>
                  <th scope="col">Queue</th>
                  <th scope="col">Role</th>
                  <th scope="col" class="num">
                    Messages
                  </th>
                </tr>
              </thead>
              <tbody>
                <DepthRow name={q.parking.name} kind="parking lot" depth={q.parking.depth} parkedOf={q.name} />
                <DepthRow name={q.work.name} kind={q.work.native === null ? 'work queue' : 'work queue: ready to take'} depth={q.work.depth} />
                {q.work.native !== null && <NativeRows of={q.name} work={q.work.name} counts={q.work.native} />}
                {held.map((d) => (
                  <DepthRow key={d.name} name={d.name} kind="delay" depth={d.depth} />
                ))}
                {empty.length > 0 && (
                  <tr class="folded" data-empty-delays={q.name}>
                    <td colSpan={2}>
                      <details>
                        <summary>
                          {empty.length} empty delay queue{empty.length === 1 ? '' : 's'}
                        </summary>
                        {empty.map((d) => (
                          <div key={d.name}>
                            <code>
                              <Name text={d.name} />
                            </code>
                          </div>
                        ))}
                      </details>
                    </td>
                    <td class="num">0</td>
                  </tr>
                )}
              </tbody>
            </table>
            {q.applyCommand !== null && (
              <p class="note" data-missing={q.name}>
                {q.missing.length === q.delays.length + 2 ? (
                  'None of its queues exists yet (each is marked missing above).'
                ) : (
                  <>
                    Not declared yet:{' '}
                    {q.missing.map((name, i) => (
                      <span key={name}>
                        {i > 0 && ', '}
                        <code>
                          <Name text={name} />
                        </code>
                      </span>
                    ))}
                    .
                  </>
                )}{' '}
                Declare its topology with <code class="command">{q.applyCommand}</code>
              </p>
            )}
            {q.work.native?.kind === 'unknown' && (
              <p class="note" data-delayed-unknown={q.name}>
                How many of its messages wait for their delay, and how many are being handled, comes from RabbitMQ's management API, which could not say:{' '}
                {q.work.native.reason}. Its address is <code>{q.work.native.option}</code> in the queue's file (or <code>{q.work.native.variable}</code>), by
                default derived from the broker's.
              </p>
            )}
            {q.problem !== null && (
              <p role="alert" class="error">
                The parking lot could not be read: {q.problem}
              </p>
            )}
            <PolicyPlot name={q.name} policy={q.policy} />
            {q.parking.depth !== null && q.problem === null && (
              <p>
                Oldest parked: <Time iso={q.parking.oldestParkedAt} /> · {q.parking.groups} failure group(s) ·{' '}
                <a href={href('q', q.name)}>Failure groups of {q.name}</a>
              </p>
            )}
          </section>
        );
      })}
    </Page>
  );
}

export { OverviewView };
