import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConsoleService } from '../../shared/console/console-service.js';
import { startConsoleServer, type ConsoleServer } from '../../shared/console/server.js';
import { statusWithHost } from '../helpers/console-fixture.js';

/** The server alone: these requests never reach the service, so none is needed. */
const NO_SERVICE = {} as ConsoleService;
const ASSETS = { html: '<!doctype html><html><head><title>console</title></head></html>', js: '', css: '' };

let server: ConsoleServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('startConsoleServer', () => {
  it.each([
    '//evil.example//evil.example/x',
    '//evil.example/',
    '/\\evil.example/x',
    '/\\/evil.example/',
    '/%2F%2Fevil.example/',
    '/%5Cevil.example/',
    '/x/..//evil.example/',
    '/.//evil.example/',
  ])('never sends the landing %s anywhere but a path of this console', async (path) => {
    // Prepare
    server = await startConsoleServer({ service: NO_SERVICE, assets: ASSETS, token: 't0ken' });
    // Act
    const location = await locationOf(`${server.origin}`, `${path}?token=t0ken`);
    // Assess
    if (location !== undefined) {
      expect(location).toMatch(/^\/(?![/\\])/);
      expect(new URL(location, server.origin).origin).toBe(server.origin);
    }
  });

  it('bound to 0.0.0.0, answers the page at 127.0.0.1 and localhost, and still refuses a foreign Host', async () => {
    // Prepare
    server = await startConsoleServer({ service: NO_SERVICE, assets: ASSETS, host: '0.0.0.0', token: 't0ken' });
    const { port } = new URL(server.origin);
    // Act
    const statuses = await Promise.all(
      ['127.0.0.1', 'localhost', 'evil.example'].map((host) => statusWithHost(`http://127.0.0.1:${port}/?token=t0ken`, `${host}:${port}`)),
    );
    // Assess
    expect(statuses).toEqual([200, 200, 403]);
  });
});

/** The Location header of a GET of this raw path (node:http sends it as written; fetch() would normalise it). */
function locationOf(origin: string, path: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    request(origin, { path }, (response) => {
      response.resume();
      resolve(response.headers.location);
    })
      .on('error', reject)
      .end();
  });
}
