/**
 * A natively parked message as a 0-9-1 reader sees it in the parking lot (RabbitMQ 4.3.6, measured):
 * the team's headers as published, the `x-opt-…` annotations of its retries and of the park, and the
 * broker's dead-letter headers. The names are spelled out, not derived, so the tests pin them.
 */

/** The team's own headers on the message. */
const TEAM_HEADERS = { tenant: 'acme', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } as const;

/** What two retries and the park wrote, as annotations. */
const NATIVE_ANNOTATIONS = {
  'x-opt-delivery-time': 1_795_334_399_000,
  'x-opt-boomerang-retry-no': 2,
  'x-opt-boomerang-failed-settlements': 2,
  'x-opt-boomerang-first-failure-at': '2026-11-22T08:00:00.000Z',
  'x-opt-boomerang-last-failure-at': '2026-11-22T08:59:00.000Z',
  'x-opt-boomerang-error-name': 'PartnerDown',
  'x-opt-boomerang-error-message': 'HTTP 503 for order 42',
  'x-opt-boomerang-error-stack': 'PartnerDown: HTTP 503 for order 42\n    at handler (orders.ts:7)',
  'x-opt-boomerang-park-reason': 'retries exhausted: 2 of 2 made',
  'x-opt-boomerang-attempts': 3,
  'x-opt-boomerang-parked-at': '2026-11-22T09:00:00.000Z',
  'x-opt-boomerang-function': 'orders-retry',
} as const;

/** The broker's record of the park: the work queue `orders` rejected it (`modified`, undeliverable here). */
const NATIVE_DEATH = {
  'x-death': [{ queue: 'orders', reason: 'rejected', count: 1, exchange: '', 'routing-keys': ['orders'], time: { '!': 'timestamp', value: 1_795_334_400 } }],
  'x-first-death-queue': 'orders',
  'x-first-death-reason': 'rejected',
  'x-first-death-exchange': '',
  'x-last-death-queue': 'orders',
  'x-last-death-reason': 'rejected',
  'x-last-death-exchange': '',
  'x-delivery-count': 3,
  'x-acquired-count': 3,
} as const;

/** Every header of a native park. */
function nativeParkHeaders(): Record<string, unknown> {
  return { ...TEAM_HEADERS, ...NATIVE_ANNOTATIONS, ...NATIVE_DEATH };
}

export { NATIVE_ANNOTATIONS, NATIVE_DEATH, nativeParkHeaders, TEAM_HEADERS };
