import { useState } from 'preact/hooks';
import { api, type Group, type Job } from './api.js';
import { AutoRefresh, Confirm, href, JobProgress, Loading, Name, Page, Time, useLoad } from './shared.js';

type Pending = { kind: 'replay' | 'purge'; group: Group };

/** A group as a confirmation names it: its error name and its message, since several groups can share a name. */
const groupName = (g: Group): string => `${g.errorName ?? 'no error name'}${g.message === '' ? '' : ` ("${g.message}")`}`;

/** How often the groups are asked for again while the switch is on (the server walks the lot only when its count changed). */
const REFRESH_MS = 10_000;

/**
 * Parks per hour over the last day, as bars: is the failure still happening? The last bar is the
 * hour before the read; its title and label say the counts.
 */
function LastDay({ hours }: { hours: readonly number[] }) {
  const most = Math.max(1, ...hours);
  const width = 3;
  const label = `parks per hour over the last 24 hours, oldest first: ${hours.join(', ')}`;
  return (
    <svg class="last-day" role="img" aria-label={label} width={hours.length * width} height={16} viewBox={`0 0 ${hours.length * width} 16`}>
      <title>{label}</title>
      {hours.map((count, i) => {
        // An hour without a park is a faint line, so the chart reads as 24 hours even when one bar stands alone.
        const height = count === 0 ? 1 : Math.max(2, Math.round((count / most) * 16));
        return <rect key={i} class={count === 0 ? 'none' : undefined} x={i * width} y={16 - height} width={width - 1} height={height} />;
      })}
    </svg>
  );
}

/** The parking lot grouped by cause, with replay and purge per group; read when opened, and again while auto-refresh is on. */
function GroupsView({ queue }: { queue: string }) {
  const [refresh, setRefresh] = useState(0);
  // A fresh read when the view opens and on "Read again"; the automatic ones reuse the last walk while the lot's count is unchanged.
  const [forced, setForced] = useState(1);
  const { data, error, reload } = useLoad(() => api.groups(queue, forced > 0), [queue, refresh]);
  const readAgain = (): void => {
    setForced(1);
    setRefresh((r) => r + 1);
  };
  const autoRead = (): void => {
    setForced(0);
    reload();
  };
  const [pending, setPending] = useState<Pending | undefined>();
  const [jobs, setJobs] = useState<Job[]>([]);
  const [failure, setFailure] = useState<string | undefined>();
  const run = (p: Pending): void => {
    setPending(undefined);
    const body = { group: p.group.key, expectedCount: p.group.count };
    (p.kind === 'replay' ? api.replay(queue, body) : api.purge(queue, body)).then(
      (job) => setJobs((js) => [job, ...js]),
      (e: Error) => setFailure(e.message),
    );
  };
  const title = `Failure groups of ${queue}`;
  return (
    <Page title={title} crumbs={[[queue, href('q', queue)]]}>
      {jobs.map((job) => (
        <JobProgress key={job.id} job={job} onDone={readAgain} />
      ))}
      {failure !== undefined && (
        <p role="alert" class="error">
          {failure}
        </p>
      )}
      {pending !== undefined && (
        <Confirm
          question={
            pending.kind === 'replay'
              ? `Replay ${pending.group.count} message(s) of ${groupName(pending.group)} to ${pending.group.sourceQueue ?? 'their source queue'}?`
              : `Delete ${pending.group.count} parked message(s) of ${groupName(pending.group)}? This cannot be undone.`
          }
          action={pending.kind === 'replay' ? `Replay ${pending.group.count}` : `Delete ${pending.group.count}`}
          danger={pending.kind === 'purge'}
          onConfirm={() => run(pending)}
          onCancel={() => setPending(undefined)}
        />
      )}
      {data === undefined ? (
        <Loading error={error} what="the failure groups" />
      ) : (
        <>
          <p class="muted">
            {data.grouped} of {data.parked} parked message(s) in {data.groups.length} group(s), read <Time iso={data.readAt} /> ·{' '}
            <button type="button" onClick={readAgain}>
              Read again
            </button>{' '}
            · <AutoRefresh everyMs={REFRESH_MS} reload={autoRead} />
          </p>
          {data.groups.length === 0 ? (
            <p>The parking lot is empty.</p>
          ) : (
            <table class="groups">
              <thead>
                <tr>
                  <th scope="col" class="num">
                    Count
                  </th>
                  <th scope="col">Error</th>
                  <th scope="col">Message</th>
                  <th scope="col">Source</th>
                  <th scope="col">First seen</th>
                  <th scope="col">Last seen</th>
                  <th scope="col">Last 24 h</th>
                  <th scope="col">Sample</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {data.groups.map((g) => (
                  <tr key={g.key} data-group={g.key}>
                    <td class="num count">{g.count}</td>
                    <td>
                      <strong>{g.errorName ?? '–'}</strong>
                    </td>
                    <td class="text">
                      <code>{g.message || '–'}</code>
                    </td>
                    <td>{g.sourceQueue === null ? '–' : <Name text={g.sourceQueue} />}</td>
                    <td>
                      <Time iso={g.firstSeen} />
                    </td>
                    <td>
                      <Time iso={g.lastSeen} />
                    </td>
                    <td>
                      <LastDay hours={g.lastDayByHour} />
                    </td>
                    <td>
                      {g.sample.messageId === null ? (
                        '–'
                      ) : (
                        <a href={href('q', queue, 'm', g.sample.messageId)} title={g.sample.errorMessage ?? ''}>
                          {g.sample.messageId}
                        </a>
                      )}
                    </td>
                    <td class="actions">
                      <a href={href('q', queue, 'g', g.key)}>Messages</a>{' '}
                      <button type="button" onClick={() => setPending({ kind: 'replay', group: g })}>
                        Replay
                      </button>{' '}
                      <button type="button" class="danger" onClick={() => setPending({ kind: 'purge', group: g })}>
                        Purge
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </Page>
  );
}

export { GroupsView };
