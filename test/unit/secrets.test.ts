import { describe, expect, it } from 'vitest';
import { powertoolsSecretStore } from '../../shared/amqp/secrets.js';

// The cache itself is Powertools' (SecretsProvider): test/integration/secrets.test.ts reads through
// it from a local Secrets Manager endpoint. Here: what is checked before any read.
describe('powertoolsSecretStore', () => {
  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('rejects maxAgeSeconds %s at once', (maxAgeSeconds) => {
    // Act & Assess
    expect(() => powertoolsSecretStore({ maxAgeSeconds })).toThrow(`Expected \`maxAgeSeconds\` to be a non-negative number, got ${maxAgeSeconds}`);
  });
});
