import { describe, expect, it } from 'vitest';
import { parseRedisSecret } from '../../shared/idempotency/redis-secret.js';
import { configErrorOf as configError } from '../helpers/config-error.js';

const ID = 'boomerang/redis';

describe('parseRedisSecret', () => {
  it.each<[string, string, ReturnType<typeof parseRedisSecret>]>([
    ['a plain password', 's3cret', { password: 's3cret' }],
    ['a plain password, kept as it is (spaces included)', ' s3 cret ', { password: ' s3 cret ' }],
    ['a password that starts with { but is no JSON', '{s3cret', { password: '{s3cret' }],
    ['a JSON string (not an object): the text is the password', '"s3cret"', { password: '"s3cret"' }],
    ['{"password"}', '{"password":"s3cret"}', { password: 's3cret' }],
    ['{"password", "username"}', '{"username":"boomerang","password":"s3cret"}', { password: 's3cret', username: 'boomerang' }],
    ['other keys ignored', '{"password":"s3cret","host":"cache.internal","port":6380}', { password: 's3cret' }],
  ])('reads %s', (_name, value, expected) => {
    // Act, Assess
    expect(parseRedisSecret(value, ID)).toEqual(expected);
  });

  it.each<[string, string, string]>([
    ['an empty secret', '', `Secret ${ID} is empty; expected the password alone, or {"password": "...", "username": "..."}`],
    ['an object without a password', '{"username":"boomerang","pass":"s3cret"}', `Secret ${ID} is a JSON object without a non-empty "password" string`],
    ['an empty password', '{"password":""}', `Secret ${ID} is a JSON object without a non-empty "password" string`],
    ['a password that is no string', '{"password":12345678}', `Secret ${ID} is a JSON object without a non-empty "password" string`],
    ['an empty user name', '{"username":"","password":"s3cret"}', `Secret ${ID}: "username" must be a non-empty string when given`],
  ])('refuses %s, naming the secret and never its value', (_name, value, message) => {
    // Act
    const error = configError(() => parseRedisSecret(value, ID));
    // Assess
    expect(error.message).toContain(message);
    expect(error.message).not.toContain('s3cret');
    expect(error.message).not.toContain('12345678');
  });
});
