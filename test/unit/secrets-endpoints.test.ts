import { describe, expect, it } from 'vitest';
import { brokerUrls, encodeCredential, parseBrokerSecret, vhostOfUrl } from '../../shared/amqp/broker-endpoints.js';
import { type AmqpSecretConfig, loadConfig } from '../../shared/config/config.js';
import { ConfigError } from '../../shared/errors.js';

const PASSWORD = 'pä@ss/w:rd%,#?x';

/** The secret config `loadConfig` makes of these variables (plus AMQP_SECRET_ID). */
function secretConfig(env: Record<string, string> = {}): AmqpSecretConfig {
  const config = loadConfig({ AMQP_SECRET_ID: 'boomerang/broker', ...env }).amqpSecret;
  if (!config) throw new Error('AMQP_SECRET_ID did not make a secret config');
  return config;
}

describe('parseBrokerSecret', () => {
  it.each([
    ['the event source shape', '{"username":"app","password":"s3cret"}', { kind: 'credentials', username: 'app', password: 's3cret' }],
    [
      'a url',
      '{"url":"amqps://app:s3cret@b-1.mq.eu-west-1.amazonaws.com:5671"}',
      { kind: 'url', urls: ['amqps://app:s3cret@b-1.mq.eu-west-1.amazonaws.com:5671'] },
    ],
    ['comma-separated urls', '{"url":"amqp://a:b@h1, amqp://a:b@h2"}', { kind: 'url', urls: ['amqp://a:b@h1', 'amqp://a:b@h2'] }],
    ['a url next to credentials (url wins)', '{"url":"amqp://a:b@h1","username":"x","password":"y"}', { kind: 'url', urls: ['amqp://a:b@h1'] }],
    ['an empty password', '{"username":"app","password":""}', { kind: 'credentials', username: 'app', password: '' }],
  ])('reads %s', (_case, secretString, expected) => {
    // Act & Assess
    expect(parseBrokerSecret(secretString, 'boomerang/broker')).toEqual(expected);
  });

  it.each([
    ['not JSON', `password=${PASSWORD}`, 'Secret boomerang/broker is not JSON; expected {"url": ...} or {"username": ..., "password": ...}'],
    ['a JSON string', JSON.stringify(PASSWORD), 'Secret boomerang/broker holds neither a "url" nor a "username" and "password" (strings)'],
    [
      'a password without a user',
      JSON.stringify({ password: PASSWORD }),
      'Secret boomerang/broker holds neither a "url" nor a "username" and "password" (strings)',
    ],
    [
      'an http url',
      JSON.stringify({ url: `http://app:${PASSWORD}@host` }),
      'Secret boomerang/broker: "url" must hold amqp:// or amqps:// URLs separated by commas',
    ],
  ])('throws ConfigError for %s, without a word of the secret', (_case, secretString, message) => {
    // Act
    let thrown: unknown;
    try {
      parseBrokerSecret(secretString, 'boomerang/broker');
    } catch (error) {
      thrown = error;
    }
    // Assess
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).toBe(message);
    expect((thrown as Error).message).not.toContain('ss/w');
  });
});

describe('brokerUrls', () => {
  it.each<[string, Record<string, string>, string]>([
    ['TLS by default, port 5671, vhost /', { AMQP_HOST: 'b-1.mq.eu-west-1.amazonaws.com' }, 'amqps://app:s3cret@b-1.mq.eu-west-1.amazonaws.com:5671/%2F'],
    ['AMQP_TLS=false: amqp on 5672', { AMQP_HOST: 'localhost', AMQP_TLS: 'false' }, 'amqp://app:s3cret@localhost:5672/%2F'],
    ['AMQP_PORT and AMQP_VHOST', { AMQP_HOST: 'mq', AMQP_PORT: '15671', AMQP_VHOST: 'prod/eu' }, 'amqps://app:s3cret@mq:15671/prod%2Feu'],
    ['an IPv6 host gets brackets', { AMQP_HOST: '::1', AMQP_TLS: 'false' }, 'amqp://app:s3cret@[::1]:5672/%2F'],
  ])('builds the URL from a username/password secret: %s', (_case, env, expected) => {
    // Act
    const urls = brokerUrls({ kind: 'credentials', username: 'app', password: 's3cret' }, secretConfig(env));
    // Assess
    expect(urls).toEqual([expected]);
  });

  it('encodes user name and password so that any character survives', () => {
    // Act
    const [url] = brokerUrls({ kind: 'credentials', username: 'app@eu', password: PASSWORD }, secretConfig({ AMQP_HOST: 'mq' }));
    // Assess
    expect(url).toBe('amqps://app%40eu:p%u00E4%40ss%2Fw%3Ard%25%2C%23%3Fx@mq:5671/%2F');
    expect(new URL(url as string).hostname).toBe('mq');
  });

  it('passes a url secret through untouched', () => {
    // Act & Assess
    expect(brokerUrls({ kind: 'url', urls: ['amqp://a:b@h1'] }, secretConfig())).toEqual(['amqp://a:b@h1']);
  });

  it('names AMQP_HOST when a username/password secret has no host to go with it', () => {
    // Act & Assess
    expect(() => brokerUrls({ kind: 'credentials', username: 'app', password: PASSWORD }, secretConfig())).toThrow(
      'AMQP_HOST is required: secret boomerang/broker holds a username and password but no broker address',
    );
  });
});

describe('encodeCredential', () => {
  it.each([
    ['plain', 'plain'],
    ['a b', 'a%20b'],
    ['ä', '%u00E4'],
    ['😀', '%uD83D%uDE00'],
  ])("encodes %j as %j, which amqplib's unescape() reads back", (value, encoded) => {
    // Act
    const result = encodeCredential(value);
    // Assess
    expect(result).toBe(encoded);
    expect(unescape(result)).toBe(value);
  });
});

describe('vhostOfUrl', () => {
  it.each([
    ['amqp://u:p@host:5672', '/'],
    ['amqp://u:p@host:5672/', '/'],
    ['amqps://u:***@host:5671/%2F', '/'],
    ['amqp://host/prod', 'prod'],
    ['amqp://host/prod%2Feu', 'prod/eu'],
    ['amqp://host/100%', '100%'],
  ])('%s connects to vhost %j', (url, vhost) => {
    // Act & Assess
    expect(vhostOfUrl(url)).toBe(vhost);
  });
});
