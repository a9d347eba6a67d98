import { describe, expect, it } from 'vitest';
import { encodeCredential } from '../../shared/amqp/broker-endpoints.js';
import { rheaConnectOptions } from '../../shared/native/rhea-connect-options.js';

const FIXED = { container_id: 'orders-retry-1', properties: { connection_name: 'orders-retry' }, reconnect: false, tcp_no_delay: true, idle_time_out: 10_000 };

describe('rheaConnectOptions', () => {
  // host, port, tls, servername: what is dialled; user, password, vhost: what the open frame says.
  it.each([
    ['no path: the default vhost', 'amqp://app:pw@mq.example.com', 'mq.example.com', 5672, false, 'mq.example.com', 'app', 'pw', '/'],
    ['the default vhost spelt %2F', 'amqp://app:pw@mq.example.com:5674/%2F', 'mq.example.com', 5674, false, 'mq.example.com', 'app', 'pw', '/'],
    ['a named vhost', 'amqp://app:pw@10.0.0.5:5672/orders%2Fprod', '10.0.0.5', 5672, false, '', 'app', 'pw', 'orders/prod'],
    ['an IPv6 address in brackets', 'amqp://app:pw@[::1]:5674/', '::1', 5674, false, '', 'app', 'pw', '/'],
    [
      'amqps: TLS on 5671 by default, SNI for the host name',
      'amqps://app:pw@b-1.mq.eu-west-1.amazonaws.com/prod',
      'b-1.mq.eu-west-1.amazonaws.com',
      5671,
      true,
      'b-1.mq.eu-west-1.amazonaws.com',
      'app',
      'pw',
      'prod',
    ],
    ['amqps to an IP address: no SNI (TLS allows none)', 'amqps://app:pw@10.0.0.5', '10.0.0.5', 5671, true, '', 'app', 'pw', '/'],
    ['percent-encoded credentials', 'amqp://us%3Aer:p%40ss%2Fw%25rd@mq', 'mq', 5672, false, 'mq', 'us:er', 'p@ss/w%rd', '/'],
    [
      'non-ASCII credentials as encodeCredential writes them (%u00E4)',
      `amqp://${encodeCredential('bär')}:${encodeCredential('pä@ss')}@mq`,
      'mq',
      5672,
      false,
      'mq',
      'bär',
      'pä@ss',
      '/',
    ],
    ['no credentials: guest, as amqplib', 'amqp://127.0.0.1:5674', '127.0.0.1', 5674, false, '', 'guest', 'guest', '/'],
  ] as const)('maps %s', (_case, url, host, port, tls, servername, username, password, vhost) => {
    // Act
    const options = rheaConnectOptions(url, 'orders-retry-1', 'orders-retry');

    // Assess
    expect(options).toEqual({ dial: { host, port, tls, servername }, open: { username, password, hostname: `vhost:${vhost}`, ...FIXED } });
  });

  it('throws on a URL that does not parse (connectAmqp10 reports it, redacted)', () => {
    // Act and Assess
    expect(() => rheaConnectOptions('amqp://app:pw@', 'c', 'n')).toThrow();
  });
});
