import { describe, expect, it } from 'vitest';
import { amqplibTextFailure } from '../../shared/amqp/amqplib-text.js';

describe('amqplibTextFailure', () => {
  it.each([
    ['Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused"', 'login-refused'],
    ['Expected ConnectionOpenOk; got <ConnectionClose channel:0>', 'vhost-refused'],
    ['Socket closed abruptly during opening handshake', 'closed-in-handshake'],
    ['Frame size 1345270062 exceeds maxFrameSize 67108864', 'not-amqp'],
    ['connect ETIMEDOUT', 'connect-timeout'],
    ['Channel closed', 'channel-closed'],
    ['Connection closed (Error: read ECONNRESET)', 'connection-closed'],
    ['Channel closed by server: 404 (NOT-FOUND)', 'channel-closed'],
    ['something else entirely', undefined],
  ])('reads %j as %s', (message, expected) => {
    // Act
    const failure = amqplibTextFailure(message);
    // Assess
    expect(failure).toBe(expected);
  });
});
