import { powertoolsSecretStore, type SecretStore } from '../amqp/secrets.js';
import type { RateStoreSpec } from '../config/rate-limit.js';
import type { Logger } from '../observability/logger.js';
import type { RateStore } from './rate-store.js';

/**
 * The store `spec` names, its client loaded here on demand (a limit without a store never loads
 * it); with a password secret, read through `secrets` (default: a Powertools cache of its own).
 */
async function openRateStore(spec: RateStoreSpec, log: Logger, secrets?: SecretStore): Promise<RateStore> {
  const { createRedisRateStore } = await import('./redis-rate-store.js');
  if (spec.secretId === undefined) return createRedisRateStore(spec.url);
  return createRedisRateStore(spec.url, {
    secretId: spec.secretId,
    secrets: secrets ?? powertoolsSecretStore({ maxAgeSeconds: spec.secretCacheSeconds }),
    log,
  });
}

export { openRateStore };
