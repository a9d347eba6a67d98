import { describe, expect, it } from 'vitest';
import { explainAmqp10Failure } from '../../shared/native/amqp10-failure.js';

const PASSWORD = 's3cret-pw';
const URL_5674 = `amqp://app:${PASSWORD}@127.0.0.1:5674/orders`;

describe('explainAmqp10Failure', () => {
  it.each([
    {
      case: 'a refused SASL login',
      outcome: { kind: 'refused', error: { message: 'Failed to authenticate: 1', condition: 'amqp:unauthorized-access' } } as const,
      expected: { reason: 'login-refused', final: true, explanation: 'the broker refused the login of user "app": check the user name and password' },
    },
    {
      case: 'a close frame naming the vhost',
      outcome: { kind: 'refused', error: { message: "virtual host 'orders' does not exist", condition: 'amqp:not-found' } } as const,
      expected: {
        reason: 'vhost-refused',
        final: true,
        explanation: "127.0.0.1:5674 closed the AMQP 1.0 connection while opening it: amqp:not-found: virtual host 'orders' does not exist",
      },
    },
    {
      case: 'another close frame',
      outcome: { kind: 'refused', error: { message: 'too many connections', condition: 'amqp:resource-limit-exceeded' } } as const,
      expected: {
        reason: 'unreachable',
        final: true,
        explanation: '127.0.0.1:5674 closed the AMQP 1.0 connection while opening it: amqp:resource-limit-exceeded: too many connections',
      },
    },
    {
      case: 'a broker that answers with AMQP 0-9-1 (RabbitMQ 3.x)',
      outcome: { kind: 'protocol', message: 'Unsupported AMQP version: 0-9-1' } as const,
      expected: {
        reason: 'unreachable',
        final: true,
        explanation:
          "127.0.0.1:5674 does not speak AMQP 1.0 (it answered with AMQP 0-9-1): delayMode 'native' needs RabbitMQ 4.3 or later, where AMQP 1.0 is served on the AMQP port",
      },
    },
    {
      case: 'a socket closed after the login (RabbitMQ 4.3 refusing the vhost)',
      outcome: { kind: 'disconnected', error: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), loginAccepted: true } as const,
      expected: {
        reason: 'vhost-refused',
        final: true,
        explanation:
          'the broker accepted the login of user "app" but would not open vhost "orders": it does not exist, or the user has no permission on it (rabbitmqctl list_permissions -p "orders")',
      },
    },
    {
      case: 'a socket closed before the login: the amqplib path explains it',
      outcome: {
        kind: 'disconnected',
        error: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5674'), { code: 'ECONNREFUSED' }),
        loginAccepted: false,
      } as const,
      expected: { reason: 'refused', final: false, explanation: expect.stringMatching(/^nothing listens on 127\.0\.0\.1:5674 \(ECONNREFUSED\)/) },
    },
    {
      case: 'no open frame in time',
      outcome: { kind: 'timeout', waitedMs: 1500 } as const,
      expected: { reason: 'timeout', final: false, explanation: '127.0.0.1:5674 did not open an AMQP 1.0 connection within 1500 ms' },
    },
  ])('explains $case', ({ outcome, expected }) => {
    // Act
    const failure = explainAmqp10Failure(outcome, URL_5674);

    // Assess
    expect(failure).toEqual(expected);
    expect(failure.explanation).not.toContain(PASSWORD);
  });

  it('redacts a URL inside a close frame description', () => {
    // Act
    const failure = explainAmqp10Failure({ kind: 'refused', error: { message: `bad amqp://app:${PASSWORD}@mq`, condition: 'amqp:internal-error' } }, URL_5674);

    // Assess
    expect(failure.explanation).not.toContain(PASSWORD);
  });
});
