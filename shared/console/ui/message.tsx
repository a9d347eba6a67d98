import { useState } from 'preact/hooks';
import { api, type Job, type MessageDetail } from './api.js';
import { editRequest, type EditRequest } from './edit-request.js';
import { Confirm, href, JobProgress, Loading, Page, useLoad } from './shared.js';

function Pairs({ entries }: { entries: Record<string, unknown> }) {
  const rows = Object.entries(entries)
    .filter(([, v]) => v !== null && v !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
  if (rows.length === 0) return <p class="muted">(none)</p>;
  return (
    <table class="pairs">
      <tbody>
        {rows.map(([k, v]) => (
          <tr key={k}>
            <th scope="row">{k}</th>
            <td>
              <code>{typeof v === 'string' ? v : JSON.stringify(v)}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The edit form: the body's exact text (when the page can edit it) and the headers a replay sends as
 * JSON. Only what changed is sent; everything else is replayed as it was parked.
 */
function EditForm({ message, onSubmit, onCancel }: { message: MessageDetail; onSubmit: (request: EditRequest) => void; onCancel: () => void }) {
  const start = message.edit;
  const [body, setBody] = useState(start.body.editable ? start.body.text : undefined);
  const [headers, setHeaders] = useState(JSON.stringify(start.headers, null, 2));
  const [problem, setProblem] = useState<string | undefined>();
  const submit = (e: Event): void => {
    e.preventDefault();
    const outcome = editRequest(start, body, headers);
    if ('problem' in outcome) setProblem(outcome.problem);
    else onSubmit(outcome.request);
  };
  return (
    <form class="edit" onSubmit={submit} aria-label="Edit and replay">
      {body === undefined ? (
        <p class="muted">The body is replayed as it is (it cannot be edited here).</p>
      ) : (
        <>
          <label for="edit-body">Body</label>
          <textarea id="edit-body" name="body" rows={12} value={body} onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)} />
        </>
      )}
      <label for="edit-headers">Headers (JSON; leave one out or set it to null to remove it)</label>
      <textarea id="edit-headers" name="headers" rows={6} value={headers} onInput={(e) => setHeaders((e.target as HTMLTextAreaElement).value)} />
      {start.otherHeaders.length > 0 && <p class="muted">Kept as they are: {start.otherHeaders.join(', ')} (set one to null above to remove it).</p>}
      {problem !== undefined && (
        <p role="alert" class="error">
          {problem}
        </p>
      )}
      <p class="muted">
        Only what you change is applied; the park headers, the broker's and the retry count are dropped as on any replay. An edited copy carries a{' '}
        <code>boomerang-edited</code> header: when it was edited and the SHA-256 of the original body. With nothing changed, it is a plain replay.
      </p>
      <button type="submit" class="primary">
        Replay edited message
      </button>{' '}
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

/** Which message a page shows: by its id, or by where the list saw it (one without an id). */
type MessagePick = { id: string } | { position: number; bodySha256: string };

/**
 * One parked message: why it is parked, properties, headers, body, stack and history; replay it,
 * edit and replay it, or delete it. One without an id is shown, not acted on here: the actions pick by id.
 */
function MessageView({ queue, pick }: { queue: string; pick: MessagePick }) {
  const id = 'id' in pick ? pick.id : undefined;
  const { data, error } = useLoad(
    () => ('id' in pick ? api.message(queue, pick.id) : api.messageAt(queue, pick.position, pick.bodySha256)),
    [queue, JSON.stringify(pick)],
  );
  const [mode, setMode] = useState<'view' | 'confirm' | 'edit' | 'delete'>('view');
  const [jobs, setJobs] = useState<Job[]>([]);
  const [failure, setFailure] = useState<string | undefined>();
  const started = (job: Job): void => {
    setMode('view');
    setJobs((js) => [job, ...js]);
  };
  const failed = (e: Error): void => setFailure(e.message);
  return (
    <Page title={'id' in pick ? `Message ${pick.id}` : `Message ${pick.position + 1} of the lot (no id)`} crumbs={[[queue, href('q', queue)]]}>
      {jobs.map((job) => (
        <JobProgress key={job.id} job={job} />
      ))}
      {failure !== undefined && (
        <p role="alert" class="error">
          {failure}
        </p>
      )}
      {data === undefined ? (
        <Loading error={error} what="the message" />
      ) : (
        <>
          {id === undefined ? (
            <p class="note" id="no-id">
              This message has no message id, so it cannot be replayed on its own from here: replay it with its group, or narrow the group's messages with a
              filter (Body contains…) and replay those.
            </p>
          ) : (
            <p>
              <button type="button" onClick={() => setMode('confirm')}>
                Replay
              </button>{' '}
              <button type="button" onClick={() => setMode('edit')}>
                Edit and replay
              </button>{' '}
              <button type="button" onClick={() => setMode('delete')}>
                Delete
              </button>
            </p>
          )}
          {id !== undefined && !data.edit.body.editable && (
            <p class="note" id="not-editable">
              The body cannot be edited here: {data.edit.body.reason}. Replay sends it unchanged; Edit and replay changes headers only.
            </p>
          )}
          {id !== undefined && mode === 'confirm' && (
            <Confirm
              question={`Replay message ${id} to ${String(data.parked.sourceQueue ?? 'its source queue')}?`}
              action="Replay 1"
              onConfirm={() => api.replay(queue, { 'message-id': id, expectedCount: 1 }).then(started, failed)}
              onCancel={() => setMode('view')}
            />
          )}
          {id !== undefined && mode === 'delete' && (
            // The same job as a group's purge, narrowed to this id and to one message: a copy parked since under the same id stays.
            <Confirm
              question={`Delete parked message ${id}? This cannot be undone.`}
              action="Delete 1"
              danger
              onConfirm={() => api.purge(queue, { 'message-id': id, expectedCount: 1 }).then(started, failed)}
              onCancel={() => setMode('view')}
            />
          )}
          {id !== undefined && mode === 'edit' && (
            <EditForm message={data} onCancel={() => setMode('view')} onSubmit={(request) => api.editReplay(queue, id, request).then(started, failed)} />
          )}
          <section>
            <h2>Why it is parked</h2>
            <Pairs entries={data.parked} />
          </section>
          <section>
            <h2>Attempt history</h2>
            {data.history.length === 0 ? (
              <p class="muted">(no history headers)</p>
            ) : (
              <ol class="history">
                {data.history.map((s, i) => (
                  <li key={i}>
                    {s.at !== null && <time dateTime={s.at}>{s.at}</time>} {s.event}
                  </li>
                ))}
              </ol>
            )}
          </section>
          <section>
            <h2>Error stack</h2>
            {data.stack === null ? <p class="muted">(none recorded)</p> : <pre class="stack">{data.stack}</pre>}
          </section>
          <section>
            <h2>
              Body{' '}
              <span class="muted">
                ({data.body.bytes} bytes, {data.body.kind === 'binary' ? 'binary, as base64' : data.body.kind}
                {data.body.cut ? `; the preview is cut${data.edit.body.editable ? ', an edit starts from the whole text' : ''}` : ''})
              </span>
            </h2>
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (WCAG 2.1.1) */}
            <pre class="body" tabIndex={0}>
              {data.body.text}
              {data.body.cut ? '\n…' : ''}
            </pre>
          </section>
          <section>
            <h2>Properties</h2>
            <Pairs entries={data.properties} />
          </section>
          <section>
            <h2>Headers</h2>
            <Pairs entries={data.headers} />
          </section>
        </>
      )}
    </Page>
  );
}

export { MessageView };
