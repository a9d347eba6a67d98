import { useState } from 'preact/hooks';
import { api, type Job } from './api.js';
import { Confirm, href, JobProgress, Loading, Page, Time, useLoad } from './shared.js';

const FIELDS = [
  ['error', 'Error name', 'PartnerDown'],
  ['older-than', 'Parked more than', '2h'],
  ['newer-than', 'Parked less than', '30m'],
  ['header', 'Header', 'tenant=acme'],
  ['grep', 'Body contains', 'text'],
  ['message-id', 'Message id', ''],
] as const;

/** One group's messages, narrowed with the CLI's filters; replay the selection. */
function GroupDetailView({ queue, group }: { queue: string; group: string }) {
  const [draft, setDraft] = useState<Record<string, string>>({});
  const [applied, setApplied] = useState<Record<string, string>>({});
  const params = new URLSearchParams({ group, ...Object.fromEntries(Object.entries(applied).filter(([, v]) => v !== '')) });
  const { data, error, reload } = useLoad(() => api.messages(queue, params), [queue, params.toString()]);
  const [confirming, setConfirming] = useState(false);
  const [jobs, setJobs] = useState<Job[]>([]);
  const [failure, setFailure] = useState<string | undefined>();
  const replay = (expectedCount: number): void => {
    setConfirming(false);
    api.replay(queue, { ...Object.fromEntries(params), expectedCount }).then(
      (job) => setJobs((js) => [job, ...js]),
      (e: Error) => setFailure(e.message),
    );
  };
  return (
    <Page title={`Group ${group}`} crumbs={[[queue, href('q', queue)]]}>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(draft);
        }}
      >
        <fieldset>
          <legend>Filters (all must hold)</legend>
          {FIELDS.map(([name, label, hint]) => (
            <label key={name}>
              {label}{' '}
              <input
                name={name}
                placeholder={hint}
                value={draft[name] ?? ''}
                onInput={(e) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value })}
              />
            </label>
          ))}
          <button type="submit" class="primary">
            Apply filters
          </button>
        </fieldset>
      </form>
      {jobs.map((job) => (
        <JobProgress key={job.id} job={job} onDone={reload} />
      ))}
      {failure !== undefined && (
        <p role="alert" class="error">
          {failure}
        </p>
      )}
      {data === undefined ? (
        <Loading error={error} what="the messages" />
      ) : (
        <>
          <p>
            {data.matched} message(s) match ({data.filter}){data.shown < data.matched ? `, the first ${data.shown} shown` : ''}.{' '}
            {data.matched > 0 && (
              <button type="button" onClick={() => setConfirming(true)}>
                Replay these {data.matched}
              </button>
            )}
          </p>
          {confirming && (
            <Confirm
              question={`Replay the ${data.matched} message(s) that match (${data.filter})?`}
              action={`Replay ${data.matched}`}
              onConfirm={() => replay(data.matched)}
              onCancel={() => setConfirming(false)}
            />
          )}
          <table>
            <thead>
              <tr>
                <th scope="col">Message id</th>
                <th scope="col">Parked</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Error</th>
                <th scope="col">Message</th>
                <th scope="col" class="num">
                  Bytes
                </th>
              </tr>
            </thead>
            <tbody>
              {data.messages.map((m, i) => (
                <tr key={`${m.messageId}-${i}`}>
                  <td>
                    {m.messageId === null ? (
                      <a href={href('q', queue, 'p', String(m.position), m.bodySha256)}>(no id: message {m.position + 1} of the lot)</a>
                    ) : (
                      <a href={href('q', queue, 'm', m.messageId)}>{m.messageId}</a>
                    )}
                  </td>
                  <td>
                    <Time iso={m.parkedAt} />
                  </td>
                  <td class="num">{m.attempts ?? '–'}</td>
                  <td>{m.errorName ?? '–'}</td>
                  <td class="text">{m.errorMessage ?? '–'}</td>
                  <td class="num">{m.bodyBytes}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </Page>
  );
}

export { GroupDetailView };
