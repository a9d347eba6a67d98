/**
 * The console's JSON API, from the browser: the token goes in a header on every call (no cookie: a
 * browser sends a host's cookies to all its ports), the custom header marks our own page.
 */

import type { EditRequest, EditStart } from './edit-request.js';

type Json = Record<string, unknown>;

class ApiError extends Error {
  public constructor(
    public readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const TOKEN_KEY = 'boomerang-console-token';

/**
 * Keeps the token the landing page carries (`<meta name="boomerang-token">`) in this tab's
 * sessionStorage, which no other origin (another port included) can read, and takes it out of the
 * page and of the address bar (`?token=`), so it stays out of the history.
 */
function keepToken(): void {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="boomerang-token"]');
  if (meta !== null) {
    sessionStorage.setItem(TOKEN_KEY, meta.content);
    meta.remove();
  }
  if (new URLSearchParams(location.search).has('token')) history.replaceState(null, '', `${location.pathname}${location.hash}`);
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'omit',
    headers: {
      'x-boomerang-token': sessionStorage.getItem(TOKEN_KEY) ?? '',
      ...(method === 'POST' ? { 'content-type': 'application/json', 'x-boomerang-console': '1' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = (await response.json().catch(() => ({}))) as Json;
  if (!response.ok) throw new ApiError(response.status, String(data.error ?? `HTTP ${response.status}`));
  return data as T;
}

const q = (queue: string): string => `/api/queues/${encodeURIComponent(queue)}`;

type Group = {
  key: string;
  errorName: string | null;
  message: string;
  sourceQueue: string | null;
  count: number;
  firstSeen: string | null;
  lastSeen: string | null;
  sample: { messageId: string | null; errorMessage: string | null };
  /** Parks per hour over the 24 hours before the read, oldest first. */
  lastDayByHour: number[];
};
type GroupsReport = { queue: string; parked: number; grouped: number; groups: Group[]; readAt: string };
type Depth = { name: string; depth: number | null };
/**
 * A native work queue's messages apart: `ready` is AMQP's count (the work queue's depth), `delayed`
 * and `unacked` the management API's; or why those are not known, and the option that sets its address.
 */
type NativeCounts =
  | { kind: 'counted'; ready: number; delayed: number; unacked: number; nextDueIn: string | null }
  | { kind: 'unknown'; reason: string; option: string; variable: string };
/** Each queue on its own: `missing` names its queues that do not exist (and `applyCommand` declares them), `problem` why its lot could not be read. */
type Overview = {
  broker: string;
  queues: {
    name: string;
    /** `native`: null for a queue whose retries wait in delay queues, or whose work queue is missing. */
    work: Depth & { native: NativeCounts | null };
    delays: Depth[];
    parking: Depth & { oldestParkedAt: string | null; groups: number | null; readAt: string | null };
    missing: string[];
    applyCommand: string | null;
    problem: string | null;
    policy: Policy;
  }[];
};
/** A queue's retry policy in time (`boomerang policy`): when each attempt comes due, and when its pull schedule takes it. */
type Policy = {
  pullEvery: string | null;
  attempts: { attempt: number; atMs: number; pullAtMs: number | null; due: string; pull: string | null; via: string }[];
  parkedAfter: string;
  parkedAfterPull: string | null;
};
/** One listed message; `position` (0 = the head of the lot) and `bodySha256` open one that has no `messageId`. */
type ListEntry = {
  messageId: string | null;
  parkedAt: string | null;
  ageMs: number | null;
  attempts: number | null;
  errorName: string | null;
  errorMessage: string | null;
  sourceQueue: string | null;
  bodyBytes: number;
  position: number;
  bodySha256: string;
};
type MessageList = { filter: string; matched: number; shown: number; messages: ListEntry[] };
/** One parked message: `body` is the display preview (JSON re-indented, maybe cut); an edit starts from `edit`, the exact text. */
type MessageDetail = {
  parked: Json;
  properties: Json;
  headers: Json;
  body: { kind: string; text: string; bytes: number; cut: boolean };
  stack: string | null;
  history: { at: string | null; event: string }[];
  edit: EditStart;
};
type Counts = { total: number; visited: number; kept: number; moved: number; deleted: number; notMoved: number };
type Job = { id: string; kind: string; label: string; state: 'running' | 'done' | 'failed'; counts: Counts | null; result: Json | null; error: string | null };

const api = {
  overview: () => call<Overview>('GET', '/api/overview'),
  groups: (queue: string, refresh = false) => call<GroupsReport>('GET', `${q(queue)}/groups${refresh ? '?refresh=1' : ''}`),
  messages: (queue: string, params: URLSearchParams) => call<MessageList>('GET', `${q(queue)}/messages?${params}`),
  message: (queue: string, id: string) => call<MessageDetail>('GET', `${q(queue)}/messages/${encodeURIComponent(id)}`),
  messageAt: (queue: string, position: number, bodySha256: string) =>
    call<MessageDetail>('GET', `${q(queue)}/positions/${position}?body-sha256=${encodeURIComponent(bodySha256)}`),
  replay: (queue: string, body: Json) => call<Job>('POST', `${q(queue)}/replay`, body),
  purge: (queue: string, body: Json) => call<Job>('POST', `${q(queue)}/purge`, body),
  editReplay: (queue: string, id: string, body: EditRequest) => call<Job>('POST', `${q(queue)}/messages/${encodeURIComponent(id)}/edit-replay`, body),
  job: (id: string) => call<Job>('GET', `/api/jobs/${encodeURIComponent(id)}`),
};

export { api, keepToken };
export type { Group, Job, MessageDetail, NativeCounts, Policy };
