import { ConfigError } from '../../shared/errors.js';

/**
 * The ConfigError `act` throws. Anything else it throws is thrown again, and throwing nothing fails
 * the test with `accepted` (what was accepted, for the message).
 * @example expect(configErrorOf(() => loadConfig({ BATCH_SIZE: '0' })).message).toContain('BATCH_SIZE');
 */
function configErrorOf(act: () => unknown, accepted = 'nothing was thrown'): ConfigError {
  try {
    act();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError: ${accepted}`);
}

export { configErrorOf };
