import { describe, expect, it } from 'vitest';
import { decideBrokerStart } from '../../shared/demo/ensure-broker.js';
import type { BrokerFailureReason } from '../../shared/errors.js';

const LOCAL = 'amqp://guest:guest@127.0.0.1:5672';

describe('decideBrokerStart', () => {
  it.each<{ reason: BrokerFailureReason | undefined; urls: string[]; expected: string }>([
    { reason: 'refused', urls: [LOCAL], expected: 'start' },
    { reason: 'refused', urls: ['amqp://localhost'], expected: 'start' },
    { reason: 'refused', urls: ['amqp://u:p@ss@localhost:5673/%2F'], expected: 'start' },
    { reason: 'refused', urls: [LOCAL, 'amqp://guest:guest@localhost:5673'], expected: 'start' },
    { reason: 'refused', urls: ['amqp://guest:guest@mq.example.com:5672'], expected: 'not-local' },
    { reason: 'refused', urls: [LOCAL, 'amqp://guest:guest@10.0.0.5:5672'], expected: 'not-local' },
    // A password that mentions a local address does not make the host local.
    { reason: 'refused', urls: ['amqp://guest:x@127.0.0.1@mq.example.com'], expected: 'not-local' },
    // Something answered: starting a second broker cannot help.
    ...(['login-refused', 'vhost-refused', 'unresolved', 'tls', 'tls-hostname', 'tls-untrusted', 'not-amqp', 'timeout', 'unreachable', undefined] as const).map(
      (reason) => ({
        reason,
        urls: [LOCAL],
        expected: 'report',
      }),
    ),
  ])('$expected when the probe failed with $reason at $urls', ({ reason, urls, expected }) => {
    // Act
    const decision = decideBrokerStart(reason, urls);
    // Assess
    expect(decision).toBe(expected);
  });
});
