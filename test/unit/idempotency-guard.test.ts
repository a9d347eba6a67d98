import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { createIdempotencyGuard, type IdempotencyGuard } from '../../shared/idempotency/guard.js';
import { toBoomerangMessage } from '../../shared/message/boomerang-message.js';
import { fakeDelivery, recordingLogger } from '../helpers/fakes.js';

/** Nothing listens on port 1: any test here that reached the store would fail with IdempotencyStoreError. */
const UNREACHABLE = { kind: 'redis', url: 'redis://127.0.0.1:1' } as const;

describe('createIdempotencyGuard (without a store)', () => {
  const guards: IdempotencyGuard[] = [];
  afterEach(async () => {
    vi.unstubAllEnvs();
    await Promise.all(guards.splice(0).map((g) => g.close()));
  });

  it("runs a message without a key unguarded, answering 'no-key', and never opens the store", async () => {
    // Prepare
    const guard = createIdempotencyGuard({ store: UNREACHABLE, keyPrefix: 'orders' }, { logger: recordingLogger().log });
    guards.push(guard);
    const message = toBoomerangMessage(fakeDelivery({ properties: { messageId: undefined } }), 'orders', 0);
    let runs = 0;
    // Act
    const outcome = await guard.run(
      message,
      async () => {
        runs += 1;
      },
      1_000,
    );
    // Assess
    expect(outcome).toBe('no-key');
    expect(runs).toBe(1);
  });

  it("treats a key function's empty answer as no key", async () => {
    // Prepare
    const guard = createIdempotencyGuard({ store: UNREACHABLE, keyPrefix: 'orders', key: () => '' }, { logger: recordingLogger().log });
    guards.push(guard);
    // Act
    const outcome = await guard.run(toBoomerangMessage(fakeDelivery(), 'orders', 0), async () => undefined, 1_000);
    // Assess
    expect(outcome).toBe('no-key');
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY])('rejects remainingMs %s before touching the store or the work', async (remainingMs) => {
    // Prepare
    const guard = createIdempotencyGuard({ store: UNREACHABLE, keyPrefix: 'orders' }, { logger: recordingLogger().log });
    guards.push(guard);
    const work = vi.fn(async () => undefined);
    // Act
    const run = guard.run(toBoomerangMessage(fakeDelivery(), 'orders', 0), work, remainingMs);
    // Assess
    await expect(run).rejects.toThrow(`Expected \`remainingMs\` to be a finite number of milliseconds, got ${remainingMs}`);
    expect(work).not.toHaveBeenCalled();
  });

  it('refuses to start when POWERTOOLS_IDEMPOTENCY_DISABLED would silently turn the guard off', () => {
    // Prepare
    vi.stubEnv('POWERTOOLS_IDEMPOTENCY_DISABLED', 'true');
    // Act, Assess
    expect(() => createIdempotencyGuard({ store: UNREACHABLE, keyPrefix: 'orders' })).toThrow(ConfigError);
    expect(() => createIdempotencyGuard({ store: UNREACHABLE, keyPrefix: 'orders' })).toThrow(
      /POWERTOOLS_IDEMPOTENCY_DISABLED is set while idempotency is configured/,
    );
  });

  it('checks its options at creation', () => {
    // Act, Assess
    expect(() => createIdempotencyGuard({ store: UNREACHABLE, keyPrefix: 'orders', ttlSeconds: 0 })).toThrow(
      'Expected `ttlSeconds` to be an integer from 1 to 31536000 (seconds), got 0',
    );
  });
});
