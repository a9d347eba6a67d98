import { redactText } from '../observability/redact.js';
import type { ConsoleService } from './console-service.js';

/** An API answer: a status and a JSON body. */
type ApiAnswer = { readonly status: number; readonly body: unknown };

type Route = {
  readonly method: 'GET' | 'POST';
  readonly pattern: RegExp;
  readonly run: (service: ConsoleService, params: string[], url: URL, body: () => Promise<Record<string, unknown>>) => Promise<unknown>;
};

/** The console's JSON API; path parts are URL-encoded (queue names and group keys hold dots, pipes, spaces). */
const ROUTES: readonly Route[] = [
  { method: 'GET', pattern: /^\/api\/overview$/, run: (s) => s.overview() },
  { method: 'GET', pattern: /^\/api\/queues\/([^/]+)\/groups$/, run: (s, [q], url) => s.groups(q as string, url.searchParams.get('refresh') === '1') },
  { method: 'GET', pattern: /^\/api\/queues\/([^/]+)\/messages$/, run: (s, [q], url) => s.messages(q as string, url.searchParams) },
  {
    method: 'GET',
    pattern: /^\/api\/queues\/([^/]+)\/messages\/([^/]+)$/,
    run: async (s, [q, id]) => (await s.message(q as string, { messageId: id as string })) ?? notFound(`no parked message has the id ${JSON.stringify(id)}`),
  },
  // A message without an id: its position in the lot and its body's SHA-256, both from the list.
  {
    method: 'GET',
    pattern: /^\/api\/queues\/([^/]+)\/positions\/(\d{1,9})$/,
    run: async (s, [q, at], url) =>
      (await s.message(q as string, { position: Number(at), bodySha256: url.searchParams.get('body-sha256') ?? '' })) ??
      notFound(`no parked message at position ${at} has that body: the parking lot changed since it was listed; list it again`),
  },
  { method: 'POST', pattern: /^\/api\/queues\/([^/]+)\/replay$/, run: async (s, [q], _url, body) => s.replay(q as string, await body()) },
  { method: 'POST', pattern: /^\/api\/queues\/([^/]+)\/purge$/, run: async (s, [q], _url, body) => s.purge(q as string, await body()) },
  {
    method: 'POST',
    pattern: /^\/api\/queues\/([^/]+)\/messages\/([^/]+)\/edit-replay$/,
    run: async (s, [q, id], _url, body) => s.editReplay(q as string, id as string, await body()),
  },
  { method: 'GET', pattern: /^\/api\/jobs\/([^/]+)$/, run: async (s, [id]) => s.jobs.get(id as string) ?? notFound(`no job ${JSON.stringify(id)}`) },
];

class NotFound {
  public constructor(public readonly message: string) {}
}

function notFound(message: string): never {
  throw new NotFound(message);
}

/**
 * Answers one API request. Bad input is a 400 naming it; a parking lot another reader holds, or one
 * not declared yet, is a 409; anything else a 500 with the error's name and message (broker URLs redacted).
 */
async function answerApi(service: ConsoleService, method: string, url: URL, body: () => Promise<Record<string, unknown>>): Promise<ApiAnswer> {
  for (const route of ROUTES) {
    const match = route.pattern.exec(url.pathname);
    if (match === null) continue;
    if (route.method !== method) return { status: 405, body: { error: `${method} is not allowed here; use ${route.method}` } };
    try {
      const params = match.slice(1).map((part) => decodeURIComponent(part));
      const result = await route.run(service, params, url, body);
      return { status: route.method === 'POST' ? 202 : 200, body: result };
    } catch (error) {
      return failure(error);
    }
  }
  return { status: 404, body: { error: `no API at ${url.pathname}` } };
}

function failure(error: unknown): ApiAnswer {
  if (error instanceof NotFound) return { status: 404, body: { error: error.message } };
  const e = error as Error;
  const status = e.name === 'ConsoleInputError' ? 400 : ['ParkingLotBusyError', 'ParkedCommandError', 'QueueNotDeclaredError'].includes(e.name) ? 409 : 500;
  return { status, body: { error: redactText(`${e.name}: ${e.message}`) } };
}

export { answerApi };
