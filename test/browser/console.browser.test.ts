import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Options } from 'amqplib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { buildConsoleAssets } from '../../shared/console/assets.js';
import { configBroker } from '../../shared/console/console-broker.js';
import { consoleQueuesFromConfig } from '../../shared/console/console-queue.js';
import { ConsoleService } from '../../shared/console/console-service.js';
import { type ConsoleServer, startConsoleServer } from '../../shared/console/server.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { tempFunctionsDir } from '../fixtures/queue-files.js';
import { AMQP_URL, TestBroker, uniqueName } from '../helpers/broker.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { consoleTestConfig, declareOneOfTwo, parkThreeKinds, startDeclaredConsole, startTestConsole } from '../helpers/console-fixture.js';
import { pullOnce, pullUntil, setUpTopology } from '../helpers/engine.js';
import { launchChromium } from './chromium.js';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));

let broker: TestBroker;
let browser: Browser;
let server: ConsoleServer;
let page: Page;
let work: string;
let parked: string;

beforeAll(async () => {
  broker = await TestBroker.open();
  ({ work, parked } = await parkThreeKinds(broker));
  ({ server } = await startTestConsole(work, { rate: 200 }));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await broker?.close();
});

/** The groups table's rows as [error name, count], in the order shown (none while it reads the parking lot again). */
async function groupRows(): Promise<[string, number][]> {
  const rows = page.locator('table.groups tbody tr');
  const out: [string, number][] = [];
  for (let i = 0; i < (await rows.count()); i++) {
    const row = rows.nth(i);
    out.push([await row.locator('td').nth(1).innerText(), Number(await row.locator('td.count').innerText())]);
  }
  return out;
}

/**
 * In the page: each element's text as the lines it is drawn on, read from where each character's
 * box sits (a new line starts where a character sits lower than the one before).
 */
const LINES_OF_EACH = `(elements) => elements.map((element) => {
  const lines = [''];
  let top;
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getBoundingClientRect();
      if (top !== undefined && rect.top > top + 2) lines.push('');
      top = rect.top;
      lines[lines.length - 1] += node.data[i];
    }
  }
  return lines;
})`;

/** The lines each element that matches `selector` is drawn on, at this window width. */
async function drawnLines(selector: string, width: number): Promise<string[][]> {
  await page.setViewportSize({ width, height: 800 });
  try {
    return (await page.evaluate(`(${LINES_OF_EACH})([...document.querySelectorAll(${JSON.stringify(selector)})])`)) as string[][];
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
}

/** Waits for the newest job panel to end and returns its text. */
/**
 * Waits for the job of this kind (`replay`, `purge`, `edit-replay`) to end, and returns its text. Found by
 * its kind, not its place: the list shows the newest first, and a new job may appear above an old,
 * finished one between the wait and the read.
 */
async function jobEnds(kind: 'replay' | 'purge' | 'edit-replay'): Promise<string> {
  const job = page.locator('.job', { hasText: new RegExp(`^${kind} `) }).first();
  await job.locator('.state', { hasText: /^(done|failed)$/ }).waitFor({ timeout: 60_000 });
  return job.innerText();
}

describe('console in Chromium', () => {
  it('opens with the printed URL, drops the token from the address bar, and shows the queue depths', async () => {
    await page.goto(server.url);
    expect(new URL(page.url()).searchParams.has('token')).toBe(false);
    await page.getByRole('heading', { name: work }).waitFor();
    expect(await page.locator(`[data-parked="${work}"]`).innerText()).toBe('9');
    expect(await page.content()).not.toContain('guest:guest');
    // The parking lot first, then the work queue; the empty delay queues folded into one line.
    const rows = page.locator(`section[aria-labelledby="q-${work}"] tbody > tr`);
    expect(await rows.nth(0).getAttribute('class')).toBe('parking');
    expect(await rows.nth(1).innerText()).toContain('work queue');
    expect(await page.locator(`[data-empty-delays="${work}"] summary`).innerText()).toMatch(/^\d+ empty delay queues?$/);
    expect(await rows.count()).toBe(3);
    expect(await page.getByRole('checkbox', { name: /read again every 5 s/ }).isChecked()).toBe(true);
    // A queue configured by the environment alone has no schedule: only when each attempt comes due.
    expect(await page.locator(`[data-policy="${work}"] svg`).getAttribute('aria-label')).toMatch(/attempt 2: due \d+ (ms|s); attempt 3/);
    expect(await page.locator(`[data-policy="${work}"] circle.pull`).count()).toBe(0);
    await page.screenshot({ path: `${IMAGES}console-overview.png`, fullPage: true });
  });

  it('hands nothing that grants access to another server on 127.0.0.1, and works again after it', async () => {
    // Prepare: another local listener, on another port, that records what the browser sends it.
    const seen: Record<string, string | string[] | undefined>[] = [];
    const other: Server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(req.url === '/' ? '<img src="/pixel.png"><p>other</p>' : '');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      // Act: the console's tab goes there (a link, a bookmark).
      await page.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
      await page.waitForLoadState('networkidle');
    } finally {
      other.close();
    }
    // Assess: no header it received holds the token, and replaying with every one of them is refused.
    expect(seen.length).toBeGreaterThan(0);
    expect(JSON.stringify(seen)).not.toContain(server.token);
    for (const headers of seen) {
      const forwarded = Object.fromEntries(
        Object.entries(headers)
          .filter(([name]) => !['host', 'connection', 'content-length'].includes(name))
          .map(([name, value]) => [name, String(value)]),
      );
      const replay = await fetch(`${server.origin}/api/queues/${encodeURIComponent(work)}/replay`, {
        method: 'POST',
        body: JSON.stringify({ group: 'x', expectedCount: 1 }),
        headers: { ...forwarded, origin: server.origin, 'sec-fetch-site': 'same-origin', 'x-boomerang-console': '1', 'content-type': 'application/json' },
      });
      expect(replay.status).toBe(401);
    }
    // The console still answers in this tab, without the token in its address.
    await page.goto(`${server.origin}/`);
    await page.getByRole('heading', { name: work }).waitFor();
    expect(await page.locator(`[data-parked="${work}"]`).innerText()).toBe('9');
  });

  it('shows three failure groups with the right counts, reached from the keyboard', async () => {
    await page.getByRole('link', { name: `Failure groups of ${work}` }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(groupRows, { timeout: 30_000 }).toEqual([
      ['PartnerDown', 4],
      ['ValidationError', 3],
      ['TimeoutError', 2],
    ]);
    const readAt = await page.locator('p.muted', { hasText: 'group(s), read' }).innerText();
    expect(readAt).toMatch(/read (just now|\d+s ago)/);
    expect(readAt).not.toContain('now ago');
    await page.screenshot({ path: `${IMAGES}console-groups.png`, fullPage: true });
    // The dark theme follows the system's preference.
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(21, 23, 26)');
    await page.screenshot({ path: `${IMAGES}console-groups-dark.png`, fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('replays one group: it drains from the parking lot and its messages reach the work queue', async () => {
    await page.locator('tr', { hasText: 'PartnerDown' }).getByRole('button', { name: 'Replay' }).click();
    expect(await page.getByRole('alertdialog').innerText()).toContain('Replay 4 message(s) of PartnerDown ("POST <url> returned <n>")');
    await page.getByRole('button', { name: 'Replay 4' }).click();
    const replayed = await jobEnds('replay');
    expect(replayed).toContain('done');
    expect(replayed).toContain(`Replayed 4 messages to ${work}.`);
    expect(replayed).not.toContain('{');
    await expect.poll(groupRows, { timeout: 30_000 }).toEqual([
      ['ValidationError', 3],
      ['TimeoutError', 2],
    ]);
    // The pull function runs on the work queue with a handler that succeeds now (the partner is back).
    const handled: { id: unknown; retryNo: number }[] = [];
    await pullUntil(
      consoleTestConfig(work),
      (message) => {
        handled.push({ id: message.properties.messageId, retryNo: message.retryNo });
      },
      () => handled.length >= 4,
    );
    expect(handled.map((m) => m.id).sort()).toEqual(['PartnerDown-0', 'PartnerDown-1', 'PartnerDown-2', 'PartnerDown-3']);
    expect(handled.every((m) => m.retryNo === 0)).toBe(true);
    expect(await broker.messageCount(work)).toBe(0);
  });

  it('purges another group after a confirmation that names the count', async () => {
    await page.locator('tr', { hasText: 'ValidationError' }).getByRole('button', { name: 'Purge' }).click();
    const dialog = page.getByRole('alertdialog');
    expect(await dialog.innerText()).toContain('Delete 3 parked message(s) of ValidationError ("order-<n>: field amount is missing")?');
    await dialog.getByRole('button', { name: 'Delete 3' }).click();
    const purged = await jobEnds('purge');
    expect(purged).toContain('done');
    expect(purged).toContain('Deleted 3 parked messages.');
    await expect.poll(groupRows, { timeout: 30_000 }).toEqual([['TimeoutError', 2]]);
    expect(await broker.messageCount(parked)).toBe(2);
  });

  it('shows one message in full, then edits and replays it with the audit header', async () => {
    await page.locator('tr', { hasText: 'TimeoutError' }).getByRole('link', { name: 'TimeoutError-0' }).click();
    await page.getByRole('heading', { name: 'Attempt history' }).waitFor();
    expect(await page.locator('pre.stack').innerText()).toContain('at deliver (webhook-delivery.ts:42:11)');
    expect(await page.locator('section', { has: page.getByRole('heading', { name: 'Why it is parked' }) }).innerText()).toContain('no answer after 3000ms');
    expect(await page.locator('pre.body').innerText()).toContain('"kind": "TimeoutError"');
    await page.screenshot({ path: `${IMAGES}console-message.png`, fullPage: true });
    await page.getByRole('button', { name: 'Edit and replay' }).click();
    await page.getByLabel('Body').fill('{"kind":"TimeoutError","i":0,"timeoutMs":10000}');
    await page.getByRole('button', { name: 'Replay edited message' }).click();
    expect(await jobEnds('edit-replay')).toContain('done');
    const [message] = await broker.drain(work, 1);
    const originalHash = createHash('sha256')
      .update(JSON.stringify({ kind: 'TimeoutError', i: 0 }))
      .digest('hex');
    expect(message?.content.toString()).toBe('{"kind":"TimeoutError","i":0,"timeoutMs":10000}');
    expect(String(message?.properties.headers?.['boomerang-edited'])).toMatch(new RegExp(`^edited-at=.+; original-body-sha256=${originalHash}$`));
    expect(await broker.messageCount(parked)).toBe(1);
  });

  it("opens another message without the last one's result banner", async () => {
    // Prepare: the edit's result is on the page.
    expect(await page.locator('.job').count()).toBe(1);
    // Act
    await page.evaluate(`location.hash = ${JSON.stringify(`#/q/${encodeURIComponent(work)}/m/TimeoutError-1`)}`);
    await page.getByRole('heading', { name: 'Message TimeoutError-1' }).waitFor();
    await page.getByRole('heading', { name: 'Attempt history' }).waitFor();
    // Assess
    expect(await page.locator('.job').count()).toBe(0);
  });

  it('answers 401 to a request without the token', async () => {
    const context = await browser.newContext();
    const response = await context.request.get(`${server.origin}/api/overview`);
    expect(response.status()).toBe(401);
    await context.close();
  });

  it('refuses a POST from another site', async () => {
    // Prepare: a page on another origin that posts a purge form to the console.
    const attacker: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<form id="f" method="POST" action="${server.origin}/api/queues/${encodeURIComponent(work)}/purge"><input name="group" value="x"></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      // Act
      const answered = page.waitForResponse((r) => r.url().includes('/purge'));
      await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      // Assess
      expect((await answered).status()).toBe(403);
      expect(await broker.messageCount(parked)).toBe(1);
    } finally {
      attacker.close();
    }
  });

  it('shows a failure parked since, and its hour in the last-day chart, without Read again', async () => {
    // Prepare: the groups view, as it reads the lot now (the last test left the console's tab)
    await page.goto(`${server.origin}/#/q/${encodeURIComponent(work)}`);
    await expect.poll(groupRows, { timeout: 30_000 }).toEqual([['TimeoutError', 1]]);
    // Act: a new failure parks while the view is open
    await broker.channel.sendToQueue(parked, Buffer.from('{"kind":"LateError"}'), {
      persistent: true,
      messageId: 'LateError-0',
      headers: {
        [BoomerangHeader.errorName]: 'LateError',
        [BoomerangHeader.errorMessage]: 'partner gone',
        [BoomerangHeader.parkedAt]: new Date().toISOString(),
      },
    });
    // Assess: the automatic read (every 10 s) shows it, and its chart has one park in the last hour
    await expect.poll(groupRows, { timeout: 40_000, interval: 1000 }).toEqual([
      ['LateError', 1],
      ['TimeoutError', 1],
    ]);
    const chart = await page.locator('tr', { hasText: 'LateError' }).locator('svg.last-day').getAttribute('aria-label');
    expect(chart).toMatch(/, 1$/);
    await page.screenshot({ path: `${IMAGES}console-groups-live.png`, fullPage: true });
  });

  it('deletes one message after a confirmation, and only that one', async () => {
    // Prepare
    await page.goto(`${server.origin}/#/q/${encodeURIComponent(work)}/m/LateError-0`);
    await page.getByRole('heading', { name: 'Message LateError-0' }).waitFor();
    await page.getByRole('heading', { name: 'Attempt history' }).waitFor();
    // Act
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('alertdialog');
    expect(await dialog.innerText()).toContain('Delete parked message LateError-0? This cannot be undone.');
    await dialog.getByRole('button', { name: 'Delete 1' }).click();
    // Assess
    const deleted = await jobEnds('purge');
    expect(deleted).toContain('Deleted 1 parked message.');
    const left = await broker.drain(parked, 1);
    expect(left.map((m) => m.properties.messageId)).toEqual(['TimeoutError-1']);
    expect(left[0]?.content.toString()).toBe(JSON.stringify({ kind: 'TimeoutError', i: 1 }));
  });
});

/** The team's headers on every message below: `x-` ones, and a table holding a list. */
const TEAM_HEADERS = { tenant: 'acme', 'x-custom': 'a', 'x-count': 7, meta: { a: 1, b: ['x', 2] } };
const BIG_NUMBERS = '{"orderId":12345678901234567890,"amount":10.50}';
const LONG_TEXT = 'line of a long text body, parked as it came\n'.repeat(7000).slice(0, 300_000);

describe('Edit and replay keeps what was not edited', () => {
  // Another client: the messages are published straight to a parking lot, as any producer could.
  let other: TestBroker;
  let own: ConsoleServer | undefined;

  beforeAll(async () => {
    other = await TestBroker.open();
  });

  afterEach(async () => {
    await own?.close();
    own = undefined;
    await other.cleanup();
  });

  afterAll(async () => {
    await other?.close();
  });

  /** A parking lot (quorum, as Boomerang declares it) holding one parked message; its work queue only when `withWork`. */
  async function parkOne(body: Buffer, properties: Options.Publish, withWork = true): Promise<{ work: string; lot: string; id: string }> {
    const work = uniqueName('edit');
    const lot = `${work}.parked`;
    const id = `${work}-m`;
    other.trackQueue(work, lot, `${lot}.reader-lock`);
    if (withWork) await other.channel.assertQueue(work, { durable: true });
    await other.channel.assertQueue(lot, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const channel = await other.connection.createConfirmChannel();
    channel.sendToQueue(lot, body, {
      persistent: true,
      messageId: id,
      ...properties,
      headers: {
        ...TEAM_HEADERS,
        'x-retry-no': 5,
        [BoomerangHeader.errorName]: 'PartnerDown',
        [BoomerangHeader.parkedAt]: new Date().toISOString(),
        [BoomerangHeader.sourceQueue]: work,
      },
    });
    await channel.waitForConfirms();
    await channel.close();
    own = (await startTestConsole(work)).server;
    await page.goto(`${own.url}#/q/${encodeURIComponent(work)}/m/${encodeURIComponent(id)}`);
    await page.getByRole('heading', { name: 'Attempt history' }).waitFor();
    return { work, lot, id };
  }

  /** Edit and replay with nothing changed, or with the body text changed by `change`. */
  async function editAndReplay(change?: (text: string) => string): Promise<string> {
    await page.getByRole('button', { name: 'Edit and replay' }).click();
    if (change !== undefined) {
      const body = page.getByLabel('Body');
      await body.fill(change(await body.inputValue()));
    }
    await page.getByRole('button', { name: 'Replay edited message' }).click();
    return jobEnds('edit-replay');
  }

  /** The one message on the work queue, read by the other client. */
  async function arrived(
    work: string,
  ): Promise<{ content: Buffer; properties: { headers?: Record<string, unknown>; contentEncoding?: string; contentType?: string } }> {
    const [message] = await other.drain(work, 1);
    if (message === undefined) throw new Error(`nothing arrived on ${work}`);
    return message;
  }

  it.each<[string, Buffer, Options.Publish, string]>([
    ['bytes 0..255', Buffer.from(Array.from({ length: 256 }, (_, i) => i)), {}, 'its bytes are not valid UTF-8'],
    [
      'a gzip body (contentEncoding gzip)',
      gzipSync(Buffer.from('{"orderId":42,"note":"abcdefghijklmnopqrst"}')),
      { contentType: 'application/json', contentEncoding: 'gzip' },
      'its content encoding is "gzip"',
    ],
  ])('says %s cannot be edited, and Replay sends its bytes and every header unchanged', async (_what, body, properties, reason) => {
    // Prepare
    const { work } = await parkOne(body, properties);
    // Act
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await page.getByRole('button', { name: 'Replay 1' }).click();
    expect(await jobEnds('replay')).toContain('done');
    // Assess
    const message = await arrived(work);
    expect(message.content.equals(body)).toBe(true);
    expect(message.properties.headers).toMatchObject(TEAM_HEADERS);
    expect(message.properties.contentEncoding).toBe(properties.contentEncoding);
    expect(await page.locator('#not-editable').innerText({ timeout: 5000 })).toContain(reason);
  });

  it.each<[string, Buffer, Options.Publish]>([
    ['a 300,000-byte text (the preview is cut, the edit is not)', Buffer.from(LONG_TEXT), { contentType: 'text/plain' }],
    ['JSON with big numbers and 10.50', Buffer.from(BIG_NUMBERS), { contentType: 'application/json' }],
  ])('replays %s unedited through Edit and replay: the same bytes and every header', async (_what, body, properties) => {
    // Prepare
    const { work } = await parkOne(body, properties);
    // Act
    const job = await editAndReplay();
    // Assess
    expect(job).toContain('done');
    const message = await arrived(work);
    expect(message.content.equals(body)).toBe(true);
    expect(message.properties.headers).toMatchObject(TEAM_HEADERS);
    // Nothing was edited: a plain replay, without the audit header.
    expect(job).toContain('Nothing was changed: replayed the message as it was');
    expect(message.properties.headers?.['boomerang-edited']).toBeUndefined();
  });

  it('shows big numbers as written, and an edit of one value changes exactly that in the bytes', async () => {
    // Prepare
    const { work } = await parkOne(Buffer.from(BIG_NUMBERS), { contentType: 'application/json' });
    expect(await page.locator('pre.body').innerText()).toBe('{\n  "orderId": 12345678901234567890,\n  "amount": 10.50\n}');
    // Act
    const job = await editAndReplay((text) => {
      expect(text).toBe(BIG_NUMBERS);
      return text.replace('10.50', '11.50');
    });
    // Assess
    expect(job).toContain(`Replayed the edited message to ${work}.`);
    const message = await arrived(work);
    expect(message.content.equals(Buffer.from('{"orderId":12345678901234567890,"amount":11.50}'))).toBe(true);
    expect(message.properties.headers).toMatchObject(TEAM_HEADERS);
    const hash = createHash('sha256').update(BIG_NUMBERS).digest('hex');
    expect(String(message.properties.headers?.['boomerang-edited'])).toMatch(new RegExp(`^edited-at=.+; original-body-sha256=${hash}$`));
  });

  it('keeps the parked original when the edited copy cannot reach its queue (no such queue): nothing is acked unconfirmed', async () => {
    // Prepare: the work queue does not exist
    const { lot } = await parkOne(Buffer.from(BIG_NUMBERS), { contentType: 'application/json' }, false);
    // Act
    const job = await editAndReplay((text) => text.replace('10.50', '11.50'));
    // Assess
    expect(job).toContain('Left the message parked');
    const [kept] = await other.drain(lot, 1);
    expect(kept?.content.equals(Buffer.from(BIG_NUMBERS))).toBe(true);
    expect(kept?.properties.headers).toMatchObject(TEAM_HEADERS);
    expect(await other.messageCount(lot)).toBe(0);
  });
});

describe('A declared queue without topology', () => {
  it('shows every declared queue: the one without topology marked missing with the command that declares it', async () => {
    // Prepare: two declared queues; only invoices has its topology (and nine parked messages).
    const functions = tempFunctionsDir();
    let own: ConsoleServer | undefined;
    try {
      await declareOneOfTwo(broker, functions.dir);
      own = (await startDeclaredConsole(functions.dir)).server;
      // Act
      await page.goto(own.url);
      await page.getByRole('heading', { name: 'partner-sync' }).waitFor();
      // Assess
      expect(await page.locator('[data-parked="invoices"]').innerText()).toBe('9');
      await page.getByRole('link', { name: 'Failure groups of invoices' }).waitFor();
      const missing = await page.locator('[data-missing="partner-sync"]').innerText();
      expect(missing).toContain('boomerang topology apply --function partner-sync');
      expect(missing).toContain('None of its queues exists yet');
      expect(await page.locator('[data-parked="partner-sync"]').innerText()).toBe('missing');
      // The retry timing as boomerang policy prints it: the template retries after 200 and 400 ms, on a pull every 5 min.
      const timing = await page.locator('[data-policy="invoices"] svg').getAttribute('aria-label');
      expect(timing).toContain('attempt 2: due 200 ms, a pull run takes it at 5 min; attempt 3: due 600 ms, a pull run takes it at 10 min');
      expect(await page.locator('[data-policy="invoices"] circle.pull').count()).toBe(3);
      await page.screenshot({ path: `${IMAGES}console-overview-declared.png`, fullPage: true });
    } finally {
      await own?.close();
      functions.remove();
    }
  });
});

describe('A parked message without a messageId', () => {
  it('opens from its group\'s list and says why it is parked, error message included; its group keeps "base64"', async () => {
    // Prepare: a lot holding one message parked without an id; a dotted work queue name.
    const work = `${uniqueName('noid')}.qa.invoices`;
    const lot = `${work}.parked`;
    broker.trackQueue(work, lot, `${lot}.reader-lock`);
    await broker.channel.assertQueue(work, { durable: true });
    await broker.channel.assertQueue(lot, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const channel = await broker.connection.createConfirmChannel();
    channel.sendToQueue(lot, Buffer.from('{"anonymous":true}'), {
      persistent: true,
      headers: {
        [BoomerangHeader.errorName]: 'EventDecodeError',
        [BoomerangHeader.errorMessage]: 'invalid base64 in field data',
        [BoomerangHeader.parkedAt]: new Date().toISOString(),
        [BoomerangHeader.sourceQueue]: work,
      },
    });
    await channel.waitForConfirms();
    await channel.close();
    const own = (await startTestConsole(work)).server;
    try {
      // Act
      await page.goto(`${own.url}#/q/${encodeURIComponent(work)}`);
      await expect.poll(groupRows, { timeout: 30_000 }).toEqual([['EventDecodeError', 1]]);
      expect(await page.locator('table.groups tbody tr td').nth(2).innerText()).toBe('invalid base64 in field data');
      // In a narrow window the source queue's name wraps at its dots and dashes, never inside a word.
      const [source] = await drawnLines('table.groups tbody td:nth-child(4)', 640);
      expect(await page.evaluate(`getComputedStyle(document.querySelector('table.groups td')).overflowWrap`)).toBe('break-word');
      expect(source?.join('')).toBe(work);
      expect(source?.length).toBeGreaterThan(1);
      for (const line of source?.slice(0, -1) ?? []) expect(line).toMatch(/[.-]$/);
      await page.getByRole('link', { name: 'Messages' }).click();
      await page.getByRole('link', { name: /^\(no id/ }).click();
      await page.getByRole('heading', { name: 'Attempt history' }).waitFor();
      // Assess
      expect(await page.locator('h1').innerText()).toBe('Message 1 of the lot (no id)');
      expect(await page.locator('section', { has: page.getByRole('heading', { name: 'Why it is parked' }) }).innerText()).toContain(
        'invalid base64 in field data',
      );
      expect(await page.locator('pre.body').innerText()).toContain('"anonymous": true');
      expect(await page.locator('#no-id').innerText()).toContain('no message id');
      expect(await broker.messageCount(lot)).toBe(1);
    } finally {
      await own.close();
    }
  });
});

describe.runIf(NATIVE_BROKER)(`A native queue, on RabbitMQ ${BROKER_VERSION}`, () => {
  it('shows its ready messages, those waiting for their delay and those being handled apart; without the management API, the ready ones and why', async () => {
    // Prepare: 3 failures retried natively in 2 minutes, then 3 new messages, 1 of them held unacked by a consumer.
    // Its own connection, whose close deletes exactly its queues (the lot's reader lock and the pause marker too).
    const own = await TestBroker.open();
    const work = uniqueName('console-native');
    const config = loadConfig({
      AMQP_URL,
      WORK_QUEUE: work,
      DELAY_MODE: 'native',
      BACKOFF_INITIAL_MS: '120000',
      BACKOFF_MAX_MS: '240000',
      BACKOFF_JITTER: '0',
    });
    await setUpTopology(own, config);
    const publish = async (bodies: string[]): Promise<void> => {
      const channel = await own.connection.createConfirmChannel();
      for (const body of bodies) channel.sendToQueue(work, Buffer.from(body), { persistent: true, messageId: body });
      await channel.waitForConfirms();
      await channel.close();
    };
    await publish(['fail-1', 'fail-2', 'fail-3']);
    expect(
      await pullOnce(config, () => {
        throw new Error('partner down');
      }),
    ).toMatchObject({ retried: 3 });
    await publish(['new-1', 'new-2', 'new-3']);
    const holder = await own.connection.createChannel();
    await holder.prefetch(1);
    await holder.consume(work, () => undefined);
    const start = async (managementUrl?: string): Promise<ConsoleServer> =>
      startConsoleServer({
        service: new ConsoleService({
          queues: consoleQueuesFromConfig(config),
          broker: configBroker({ ...config, managementUrl }),
          retryHeader: config.retryHeader,
        }),
        assets: await buildConsoleAssets(),
      });
    const shown = await start();
    const blind = await start('http://127.0.0.1:1');
    try {
      // Act: the overview reads again every 5 s; the management API samples a new queue within about as long.
      await page.goto(shown.url);
      const section = page.locator(`section[aria-labelledby="q-${work}"]`);
      await expect
        .poll(
          () =>
            page
              .locator(`[data-delayed="${work}"]`)
              .innerText()
              .catch(() => ''),
          { timeout: 30_000 },
        )
        .toBe('3');
      await expect.poll(() => page.locator(`[data-unacked="${work}"]`).innerText(), { timeout: 15_000 }).toBe('1');
      await page.screenshot({ path: `${IMAGES}console-overview-native.png`, fullPage: true });
      const rows = await section.locator('tbody > tr').allInnerTexts();
      await page.goto(blind.url);
      const note = page.locator(`[data-delayed-unknown="${work}"]`);
      await note.waitFor();
      // Assess
      expect(rows.map((row) => row.replace(/\s+/g, ' ').trim())).toEqual([
        `${config.parkingQueue} parking lot 0`,
        `${work} work queue: ready to take 2`,
        expect.stringMatching(/^same queue waiting for their delay \(retries the broker holds; the next is due in (1 min( \d+ s)?|\d+(\.\d)? s)\) 3$/),
        'same queue being handled (taken, not settled yet) 1',
      ]);
      expect(await page.locator(`section[aria-labelledby="q-${work}"] tbody > tr`).count()).toBe(2);
      expect(await note.innerText()).toMatch(
        /comes from RabbitMQ's management API, which could not say: http:\/\/127\.0\.0\.1:1 did not answer .*advanced\.managementUrl in the queue's file \(or MANAGEMENT_URL\)/,
      );
      expect(await page.content()).not.toContain('guest:guest');
    } finally {
      await shown.close();
      await blind.close();
      await holder.close();
      await own.close();
    }
  });
});
