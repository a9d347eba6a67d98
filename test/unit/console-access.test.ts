import { describe, expect, it } from 'vitest';
import { allowedHosts, checkAccess, type AccessOptions } from '../../shared/console/access.js';

const OPTIONS: AccessOptions = { token: 's3cret-token', allowedHosts: ['127.0.0.1:8123', 'localhost:8123'] };
const ORIGIN = 'http://127.0.0.1:8123';
const TOKEN = { 'x-boomerang-token': 's3cret-token' };

function request(method: string, path: string, headers: Record<string, string> = {}) {
  return { method, url: new URL(path, ORIGIN), headers: { host: '127.0.0.1:8123', ...headers } };
}

describe('checkAccess', () => {
  it.each([
    ['the landing, with the token in the URL', request('GET', '/?token=s3cret-token'), { kind: 'allow', landing: true }],
    ['the page without the token (it holds no data)', request('GET', '/'), { kind: 'allow', landing: false }],
    ['the script without the token', request('GET', '/app.js'), { kind: 'allow', landing: false }],
    ['an API GET with the token header', request('GET', '/api/overview', TOKEN), { kind: 'allow', landing: false }],
    ['an API GET on localhost', request('GET', '/api/overview', { host: 'localhost:8123', ...TOKEN }), { kind: 'allow', landing: false }],
    [
      'POST from the page',
      request('POST', '/api/x', { ...TOKEN, origin: ORIGIN, 'sec-fetch-site': 'same-origin', 'x-boomerang-console': '1' }),
      { kind: 'allow', landing: false },
    ],
    [
      'POST from a client that sends no Origin but the header',
      request('POST', '/api/x', { ...TOKEN, 'x-boomerang-console': '1' }),
      { kind: 'allow', landing: false },
    ],
  ])('allows %s', (_name, req, expected) => {
    expect(checkAccess(req, OPTIONS)).toEqual(expected);
  });

  it.each([
    ['no token', request('GET', '/api/overview'), 401, 'token is missing or wrong'],
    ['a wrong token', request('GET', '/?token=s3cret-tokem'), 401, 'token is missing or wrong'],
    ['a token of another length', request('GET', '/api/overview', { 'x-boomerang-token': 's3' }), 401, 'token is missing or wrong'],
    [
      'the token in a cookie (a cookie reaches every port)',
      request('GET', '/api/overview', { cookie: 'boomerang_console_8123=s3cret-token' }),
      401,
      'token is missing or wrong',
    ],
    ['the token in an API URL', request('GET', '/api/overview?token=s3cret-token'), 401, 'token is missing or wrong'],
    ['a foreign Host (DNS rebinding)', request('GET', '/?token=s3cret-token', { host: 'evil.example:8123' }), 403, 'unknown host'],
    [
      'a cross-site Origin',
      request('POST', '/api/x', { ...TOKEN, origin: 'http://evil.example', 'x-boomerang-console': '1' }),
      403,
      'cross-site request from http://evil.example',
    ],
    [
      'Sec-Fetch-Site cross-site',
      request('POST', '/api/x', { ...TOKEN, 'sec-fetch-site': 'cross-site', 'x-boomerang-console': '1' }),
      403,
      'Sec-Fetch-Site: cross-site',
    ],
    ['a POST without the custom header', request('POST', '/api/x', { ...TOKEN, origin: ORIGIN }), 403, 'x-boomerang-console missing'],
    ['a cross-site POST without any token', request('POST', '/api/x', { origin: 'http://evil.example' }), 403, 'cross-site'],
  ])('refuses %s', (_name, req, status, reason) => {
    const decision = checkAccess(req, OPTIONS);
    expect(decision).toMatchObject({ kind: 'deny', status });
    expect(decision.kind === 'deny' && decision.reason).toContain(reason);
  });
});

describe('allowedHosts', () => {
  const INTERFACES = {
    lo: [
      { address: '127.0.0.1', family: 'IPv4' },
      { address: '::1', family: 'IPv6' },
    ],
    eth0: [
      { address: '10.0.0.5', family: 'IPv4' },
      { address: 'fe80::1', family: 'IPv6' },
    ],
  } as const;

  it.each([
    ['127.0.0.1', ['127.0.0.1:8123', 'localhost:8123']],
    ['::1', ['[::1]:8123', 'localhost:8123', '127.0.0.1:8123']],
    ['10.0.0.5', ['10.0.0.5:8123']],
    ['0.0.0.0', ['127.0.0.1:8123', '[::1]:8123', '10.0.0.5:8123', '[fe80::1]:8123', 'localhost:8123']],
    ['::', ['127.0.0.1:8123', '[::1]:8123', '10.0.0.5:8123', '[fe80::1]:8123', 'localhost:8123']],
  ])('bound to %s, accepts the Host values %j', (host, expected) => {
    // Act
    const hosts = allowedHosts(host, 8123, INTERFACES);
    // Assess
    expect([...hosts].sort()).toEqual([...expected].sort());
  });
});
