import { Fragment, type ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Job } from './api.js';
import { jobResultText } from './job-result.js';
import { timeAgo } from './time-ago.js';

/** A link inside the app (hash routes, so reloads and the back button work without a server route). */
const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;

function Time({ iso }: { iso: string | null }) {
  return iso === null ? (
    <span>–</span>
  ) : (
    <time dateTime={iso} title={iso}>
      {timeAgo(iso, Date.now())}
    </time>
  );
}

/**
 * A queue name that may wrap after its dots, dashes, underscores and slashes, never inside a word
 * (`qa.invoic|es`): the cells' CSS breaks a word only when nothing else fits.
 */
function Name({ text }: { text: string }) {
  return (
    <>
      {text.split(/(?<=[./_-])/).map((part, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </>
  );
}

/**
 * Loads data, showing loading and errors in words; `reload` runs it again, keeping what is shown until
 * the new data is in (no flicker for an automatic refresh). New `deps` start from nothing.
 */
function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: string | undefined; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const [round, setRound] = useState(0);
  const shownFor = useRef<string | undefined>(undefined);
  useEffect(() => {
    let live = true;
    const key = JSON.stringify(deps);
    if (shownFor.current !== key) setState({});
    shownFor.current = key;
    load().then(
      (data) => live && setState({ data }),
      (error: Error) => live && setState({ error: error.message }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  return { data: state.data, error: state.error, reload: () => setRound((r) => r + 1) };
}

function Loading({ error, what }: { error: string | undefined; what: string }) {
  return error === undefined ? (
    <p role="status">Reading {what}… (a walk of the parking lot: it stays as it was)</p>
  ) : (
    <p role="alert" class="error">
      {error}
    </p>
  );
}

/**
 * A confirmation that names what will happen; the confirm button takes the focus, Escape cancels.
 */
function Confirm({
  question,
  action,
  danger,
  onConfirm,
  onCancel,
}: {
  question: string;
  action: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => button.current?.focus(), []);
  return (
    <div class="confirm" role="alertdialog" aria-label={question} onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
      <p>{question}</p>
      <button ref={button} type="button" class={danger ? 'danger' : 'primary'} onClick={onConfirm}>
        {action}
      </button>{' '}
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** Live progress of a background action, polled until it ends. */
function JobProgress({ job: started, onDone }: { job: Job; onDone?: (job: Job) => void }) {
  const [job, setJob] = useState(started);
  useEffect(() => {
    if (job.state !== 'running') {
      onDone?.(job);
      return;
    }
    const timer = setTimeout(() => void api.job(job.id).then(setJob, () => undefined), 400);
    return () => clearTimeout(timer);
  }, [job]);
  const c = job.counts;
  return (
    <div class={`job ${job.state}`} role="status" aria-live="polite">
      <strong>{job.kind}</strong> {job.label}: <span class="state">{job.state}</span>
      {c !== null && <progress max={c.total || 1} value={c.visited} />}
      {c !== null && (
        <span>
          {' '}
          {c.visited}/{c.total} read · {c.moved} replayed · {c.deleted} deleted · {c.kept} kept
        </span>
      )}
      {job.error !== null && <p class="error">{job.error}</p>}
      {job.result !== null && (
        <ul class="result">
          {jobResultText(job.kind, job.result).map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Page({ title, crumbs, children }: { title: string; crumbs?: [string, string][]; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Boomerang console`;
  }, [title]);
  return (
    <main>
      <nav aria-label="Breadcrumb">
        <a href="#/">Overview</a>
        {(crumbs ?? []).map(([label, link]) => (
          <span key={link}>
            {' '}
            › <a href={link}>{label}</a>
          </span>
        ))}
      </nav>
      <h1 tabIndex={-1}>{title}</h1>
      {children}
    </main>
  );
}

/**
 * A switch for reading a view again every `everyMs` (on until it is turned off; the choice is kept for
 * the browser tab), and the calls to `reload` it makes while on.
 */
function AutoRefresh({ everyMs, reload }: { everyMs: number; reload: () => void }) {
  const [on, setOn] = useState(() => sessionStorage.getItem('boomerang-auto-refresh') !== 'off');
  const latest = useRef(reload);
  latest.current = reload;
  useEffect(() => {
    sessionStorage.setItem('boomerang-auto-refresh', on ? 'on' : 'off');
    if (!on) return undefined;
    const timer = setInterval(() => latest.current(), everyMs);
    return () => clearInterval(timer);
  }, [on, everyMs]);
  return (
    <label class="auto-refresh">
      <input type="checkbox" checked={on} onChange={(e) => setOn((e.target as HTMLInputElement).checked)} /> read again every {everyMs / 1000} s
    </label>
  );
}

export { AutoRefresh, Confirm, href, JobProgress, Loading, Name, Page, Time, useLoad };
