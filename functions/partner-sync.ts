import { defineQueue } from 'boomerang-rabbitmq';
import { createPartnerSync } from '../shared/examples/partner-sync/partner-sync.js';

/** Partner sync: each message PUTs one record to the partner API (PARTNER_API_URL). */
export const { queue, pull, event } = defineQueue({
  name: 'partner-sync',
  handler: createPartnerSync(),
  workQueue: 'boomerang.partner-sync',
  retry: { maxRetries: 5, initialDelayMs: 5000, multiplier: 3, maxDelayMs: 900_000, jitter: 0.2 },
  rules: [
    // The partner holds a newer version: ours can never win, a human decides.
    { match: { errorName: 'PartnerConflictError' }, retry: false },
    // Rate limited: its Retry-After sets the delay, otherwise a steady pace; and the whole queue waits as long.
    { match: { errorName: 'PartnerRateLimitedError' }, pauseQueue: true, maxRetries: 10, initialDelayMs: 30_000, multiplier: 1, maxDelayMs: 60_000 },
    // Down or deploying: keep trying for about a day.
    { match: { errorName: 'PartnerUnavailableError' }, maxRetries: 30, maxDelayMs: 3_600_000 },
  ],
  batchSize: 50,
  // Well under the 10 requests in flight the partner allows per client.
  concurrency: 4,
  deploy: {
    modes: ['pull', 'event'],
    acknowledgeCompetingModes: true,
    pull: { rateMinutes: 2 },
    event: { batchSize: 50 },
    // A conflict waits for a human for two weeks, then the partner's copy has long won: deleted once a day.
    retention: { olderThan: '14d' },
  },
});
