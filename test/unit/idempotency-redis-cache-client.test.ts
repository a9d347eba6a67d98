import { describe, expect, it } from 'vitest';
import { redisSetOptions } from '../../shared/idempotency/redis-cache-client.js';

describe('redisSetOptions', () => {
  it.each([
    [{ EX: 3600 }, { expireSeconds: 3600, onlyIfAbsent: false }],
    [
      { EX: 3600, NX: true },
      { expireSeconds: 3600, onlyIfAbsent: true },
    ],
    [
      { EX: 10, NX: false },
      { expireSeconds: 10, onlyIfAbsent: false },
    ],
  ])('reads %o as %o', (options, expected) => {
    // Act
    const read = redisSetOptions(options);
    // Assess
    expect(read).toEqual(expected);
  });

  it.each([
    [undefined, 'Expected the SET options to be an object with `EX`, got undefined'],
    [{}, 'Expected `EX` to be an integer number of seconds, got undefined'],
    [{ EX: 1.5 }, 'Expected `EX` to be an integer number of seconds, got 1.5'],
    [{ EX: '60' }, 'Expected `EX` to be an integer number of seconds, got 60'],
    [{ EX: 60, NX: 'yes' }, 'Expected `NX` to be a boolean, got yes'],
    [{ EX: 60, NX: true, GET: true }, 'Expected only `EX` and `NX` in the SET options, got `GET`'],
    [{ PX: 60_000, XX: true }, 'Expected only `EX` and `NX` in the SET options, got `PX`, `XX`'],
  ])('refuses %o, naming the problem', (options, message) => {
    // Act
    const read = () => redisSetOptions(options);
    // Assess
    expect(read).toThrow(new TypeError(message));
  });
});
