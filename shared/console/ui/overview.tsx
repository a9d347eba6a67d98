import { api } from './api.js';
import { href, Loading, Name, Page, Time, useLoad } from './shared.js';

const n = (depth: number | null): string => (depth === null ? 'missing' : String(depth));

/**
 * Each queue: work-queue depth, each delay queue, parked count and the oldest parked message; a queue
 * without topology says which of its queues are missing and the command that declares them.
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
        </button>
      </p>
      {data.queues.map((q) => (
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
              <tr>
                <td>
                  <code>
                    <Name text={q.work.name} />
                  </code>
                </td>
                <td>work queue</td>
                <td class="num">{n(q.work.depth)}</td>
              </tr>
              {q.delays.map((d) => (
                <tr key={d.name}>
                  <td>
                    <code>
                      <Name text={d.name} />
                    </code>
                  </td>
                  <td>delay</td>
                  <td class="num">{n(d.depth)}</td>
                </tr>
              ))}
              <tr class="parking">
                <td>
                  <code>
                    <Name text={q.parking.name} />
                  </code>
                </td>
                <td>parking lot</td>
                <td class="num" data-parked={q.name}>
                  {n(q.parking.depth)}
                </td>
              </tr>
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
          {q.problem !== null && (
            <p role="alert" class="error">
              The parking lot could not be read: {q.problem}
            </p>
          )}
          {q.parking.depth !== null && q.problem === null && (
            <p>
              Oldest parked: <Time iso={q.parking.oldestParkedAt} /> · {q.parking.groups} failure group(s) ·{' '}
              <a href={href('q', q.name)}>Failure groups of {q.name}</a>
            </p>
          )}
        </section>
      ))}
    </Page>
  );
}

export { OverviewView };
