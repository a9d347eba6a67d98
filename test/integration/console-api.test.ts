import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConsoleServer } from '../../shared/console/server.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { declareOneOfTwo, KINDS, parkThreeKinds, startDeclaredConsole, startTestConsole, statusWithHost } from '../helpers/console-fixture.js';
import { tempFunctionsDir } from '../fixtures/queue-files.js';
import { runParkedCli } from '../helpers/parked-cli.js';
import { useTestBroker } from '../helpers/topology.js';

const broker = useTestBroker();
let server: ConsoleServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A request as the console's own page makes it: the token header, and for a POST the same origin and the custom header. */
async function api(s: ConsoleServer, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const token = { 'x-boomerang-token': s.token };
  const post =
    body === undefined
      ? {}
      : {
          method: 'POST',
          body: JSON.stringify(body),
          headers: { ...token, origin: s.origin, 'sec-fetch-site': 'same-origin', 'x-boomerang-console': '1', 'content-type': 'application/json' },
        };
  const response = await fetch(`${s.origin}${path}`, { headers: token, ...post });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function finished(s: ConsoleServer, jobId: string, timeoutMs = 8000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { json } = await api(s, `/api/jobs/${jobId}`);
    if (json.state !== 'running') return json;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still running after ${timeoutMs} ms: ${JSON.stringify(json)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('console API', () => {
  it('returns the same groups as `parked groups --json`', async () => {
    // Prepare
    const { work } = await parkThreeKinds(broker());
    ({ server } = await startTestConsole(work));
    // Act
    const cli = await runParkedCli(['groups', '--json'], work);
    const { status, json } = await api(server, `/api/queues/${encodeURIComponent(work)}/groups?refresh=1`);
    // Assess
    expect(cli.code).toBe(0);
    expect(status).toBe(200);
    const { readAt, ...fromConsole } = json;
    expect(typeof readAt).toBe('string');
    expect(fromConsole).toEqual(JSON.parse(cli.stdout));
    expect((fromConsole.groups as { count: number }[]).map((g) => g.count)).toEqual(KINDS.map((k) => k.count));
  });

  it('answers 401 without the token or with it only in the URL, 403 to a cross-site or header-less POST and to a foreign Host', async () => {
    // Prepare
    const { work } = await parkThreeKinds(broker());
    ({ server } = await startTestConsole(work));
    const token = { 'x-boomerang-token': server.token };
    const replay = `${server.origin}/api/queues/${encodeURIComponent(work)}/replay`;
    const body = JSON.stringify({ group: 'x' });
    // Act
    const noToken = await fetch(`${server.origin}/api/overview`);
    const wrongToken = await fetch(`${server.origin}/api/overview?token=nope`);
    const crossSite = await fetch(replay, { method: 'POST', body, headers: { ...token, origin: 'http://evil.example', 'x-boomerang-console': '1' } });
    const noHeader = await fetch(replay, { method: 'POST', body, headers: { ...token, origin: server.origin } });
    const rebound = await statusWithHost(`${server.origin}/api/overview`, 'evil.example', token);
    const first = await fetch(server.url, { redirect: 'manual' });
    // Assess
    expect([noToken.status, wrongToken.status, crossSite.status, noHeader.status, rebound]).toEqual([401, 401, 403, 403, 403]);
    // The landing answers with the page, the token in it for the tab to keep: no cookie, no redirect.
    expect(first.status).toBe(200);
    expect([first.headers.get('location'), first.headers.get('set-cookie')]).toEqual([null, null]);
    expect(await first.text()).toContain(`<meta name="boomerang-token" content="${server.token}">`);
    expect(await broker().messageCount(`${work}.parked`)).toBe(9);
  });

  it('shows the broker without its password', async () => {
    const { work } = await parkThreeKinds(broker());
    ({ server } = await startTestConsole(work));
    const { json } = await api(server, '/api/overview');
    expect(String(json.broker)).not.toContain('guest:guest');
    expect(json.queues).toMatchObject([{ name: work, parking: { depth: 9, oldestParkedAt: expect.any(String) } }]);
  });

  it('shows every declared queue when one has no topology yet: that one marked missing with the command that declares it', async () => {
    // Prepare: two declared queues; only invoices has its topology (and nine parked messages).
    const functions = tempFunctionsDir();
    try {
      const { undeclared } = await declareOneOfTwo(broker(), functions.dir);
      ({ server } = await startDeclaredConsole(functions.dir));
      // Act
      const overview = await api(server, '/api/overview');
      const groups = await api(server, '/api/queues/partner-sync/groups');
      // Assess
      expect(overview.status).toBe(200);
      const queues = overview.json.queues as Record<string, unknown>[];
      expect(queues.find((q) => q.name === 'invoices')).toMatchObject({ parking: { depth: 9, groups: 3 }, missing: [], applyCommand: null, problem: null });
      const missing = queues.find((q) => q.name === 'partner-sync');
      expect(missing).toMatchObject({
        parking: { name: `${undeclared}.parked`, depth: null, groups: null },
        applyCommand: 'boomerang topology apply --function partner-sync',
        problem: null,
      });
      expect(missing?.missing).toEqual(expect.arrayContaining([undeclared, `${undeclared}.parked`]));
      expect(groups.status).toBe(409);
      expect(groups.json.error).toContain('boomerang topology apply --function partner-sync');
      expect(groups.json.error).not.toContain('PARKING_QUEUE');
    } finally {
      functions.remove();
    }
  });

  it('replays a group, purges another at most the confirmed count, and edits and replays one message with the audit header', async () => {
    // Prepare
    const { work, parked } = await parkThreeKinds(broker());
    ({ server } = await startTestConsole(work, { rate: 500 }));
    const q = `/api/queues/${encodeURIComponent(work)}`;
    const groups = (await api(server, `${q}/groups`)).json.groups as { key: string; errorName: string }[];
    const key = (name: string): string => (groups.find((g) => g.errorName === name) as { key: string }).key;
    // Act
    const replay = await api(server, `${q}/replay`, { group: key('PartnerDown'), expectedCount: 4 });
    const replayed = await finished(server, String(replay.json.id));
    const purge = await api(server, `${q}/purge`, { group: key('ValidationError'), expectedCount: 2 });
    const purged = await finished(server, String(purge.json.id));
    const edit = await api(server, `${q}/messages/TimeoutError-0/edit-replay`, { body: '{"fixed":true}', headers: { set: { tenant: 'globex' } } });
    const edited = await finished(server, String(edit.json.id));
    // Assess
    expect([replay.status, purge.status, edit.status]).toEqual([202, 202, 202]);
    expect(replayed).toMatchObject({ state: 'done', result: { selected: 4, byQueue: { [work]: 4 } } });
    expect(purged).toMatchObject({ state: 'done', result: { deleted: 2 } });
    expect(edited).toMatchObject({ state: 'done', result: { found: true, replayedTo: work, edited: true } });
    const arrived = await broker().drain(work, 5);
    expect(arrived.map((m) => m.properties.messageId).sort()).toEqual(['PartnerDown-0', 'PartnerDown-1', 'PartnerDown-2', 'PartnerDown-3', 'TimeoutError-0']);
    const fixed = arrived.find((m) => m.properties.messageId === 'TimeoutError-0');
    const originalHash = createHash('sha256')
      .update(JSON.stringify({ kind: 'TimeoutError', i: 0 }))
      .digest('hex');
    expect(fixed?.content.toString()).toBe('{"fixed":true}');
    expect(fixed?.properties.headers).toMatchObject({
      tenant: 'globex',
      'boomerang-edited': expect.stringMatching(new RegExp(`^edited-at=\\d{4}-.*; original-body-sha256=${originalHash}$`)),
    });
    expect(fixed?.properties.headers?.['boomerang-error-name']).toBeUndefined();
    expect(await broker().messageCount(parked)).toBe(2);
  });

  it('replays a group at most the count the operator confirmed, and refuses a replay without one', async () => {
    // Prepare: the operator saw 2 PartnerDown messages; 2 more were parked since.
    const { work, parked } = await parkThreeKinds(broker());
    ({ server } = await startTestConsole(work, { rate: 500 }));
    const q = `/api/queues/${encodeURIComponent(work)}`;
    const groups = (await api(server, `${q}/groups`)).json.groups as { key: string; errorName: string }[];
    const group = (groups.find((g) => g.errorName === 'PartnerDown') as { key: string }).key;
    // Act
    const unbounded = await api(server, `${q}/replay`, { group });
    const replay = await api(server, `${q}/replay`, { group, expectedCount: 2 });
    const replayed = await finished(server, String(replay.json.id));
    // Assess
    expect(unbounded.status).toBe(400);
    expect(String(unbounded.json.error)).toContain('expectedCount');
    expect(replayed).toMatchObject({ state: 'done', result: { selected: 2, byQueue: { [work]: 2 } } });
    expect(await broker().messageCount(work)).toBe(2);
    expect(await broker().messageCount(parked)).toBe(7);
  });

  it("opens a message without a messageId by its position in the lot and its body's hash, and answers 404 once the body differs", async () => {
    // Prepare: a tenth message, parked without a messageId, behind the nine.
    const { work, parked } = await parkThreeKinds(broker());
    broker().channel.sendToQueue(parked, Buffer.from('{"anonymous":true}'), {
      persistent: true,
      headers: { [BoomerangHeader.errorName]: 'EventDecodeError', [BoomerangHeader.errorMessage]: 'invalid base64 in field data' },
    });
    await expect.poll(() => broker().messageCount(parked)).toBe(10);
    ({ server } = await startTestConsole(work));
    const q = `/api/queues/${encodeURIComponent(work)}`;
    // Act
    const list = await api(server, `${q}/messages?error=EventDecodeError`);
    const [entry] = list.json.messages as { messageId: string | null; position: number; bodySha256: string }[];
    const opened = await api(server, `${q}/positions/${entry?.position}?body-sha256=${entry?.bodySha256}`);
    const stale = await api(server, `${q}/positions/${entry?.position}?body-sha256=${'0'.repeat(64)}`);
    // Assess
    expect(entry).toMatchObject({ messageId: null, position: 9, bodySha256: createHash('sha256').update('{"anonymous":true}').digest('hex') });
    expect(opened.status).toBe(200);
    expect(opened.json).toMatchObject({
      parked: { error: 'EventDecodeError', errorMessage: 'invalid base64 in field data' },
      body: { text: '{\n  "anonymous": true\n}' },
    });
    expect(stale.status).toBe(404);
    expect(String(stale.json.error)).toContain('list it again');
    expect(await broker().messageCount(parked)).toBe(10);
  });

  it('answers 400 naming the bad input, and keeps every message', async () => {
    const { work, parked } = await parkThreeKinds(broker());
    ({ server } = await startTestConsole(work));
    const q = `/api/queues/${encodeURIComponent(work)}`;
    const answers = await Promise.all([
      api(server, `${q}/purge`, { group: 'x' }),
      api(server, `${q}/purge`, { expectedCount: 3 }),
      api(server, `${q}/replay`, { 'older-than': 'soon', expectedCount: 1 }),
      api(server, `${q}/messages/m/edit-replay`, { body: 1, headers: {} }),
      api(server, '/api/queues/nope/groups'),
    ]);
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400, 400]);
    expect(answers.map((a) => String(a.json.error))).toEqual([
      expect.stringContaining('expectedCount'),
      expect.stringContaining('needs a filter'),
      expect.stringContaining('older-than must be a duration'),
      expect.stringContaining('`body`'),
      expect.stringContaining('no queue "nope"'),
    ]);
    expect(await broker().messageCount(parked)).toBe(9);
  });
});
