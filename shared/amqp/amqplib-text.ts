/**
 * The failures amqplib reports only as text, read in this one place. Everything else is classified by
 * typed fields: amqplib's `code` (the broker's reply code) with `classId`/`methodId` on a channel
 * close, Node's socket `code`, and the `reason` of our own errors.
 */

/** What a text-only amqplib failure was. */
type AmqplibTextFailure = 'login-refused' | 'vhost-refused' | 'closed-in-handshake' | 'not-amqp' | 'connect-timeout' | 'channel-closed' | 'connection-closed';

// amqplib gives only text for these: a connection.close during the handshake is formatted into the
// message (a refused login: "403 (ACCESS-REFUSED)"; a refused vhost: the reply to connection.open is
// dropped, leaving "Expected ConnectionOpenOk; got <ConnectionClose"), its own connect timeout is a
// plain Error('connect ETIMEDOUT'), a server that answers in another protocol shows as a frame too
// large (amqplib reads its first bytes as a frame header), and IllegalOperationError is one class for an operation on a
// closed channel and on a closed connection ("Channel closed", "Connection closed (...)").
const TEXT_FAILURES: ReadonlyArray<readonly [RegExp, AmqplibTextFailure]> = [
  [/ACCESS-REFUSED|\b403\b/, 'login-refused'],
  [/Expected ConnectionOpenOk; got <ConnectionClose/, 'vhost-refused'],
  [/closed abruptly during opening handshake/, 'closed-in-handshake'],
  [/^Frame size \d+ exceeds maxFrameSize/, 'not-amqp'],
  [/ETIMEDOUT/, 'connect-timeout'],
  [/^Channel closed/, 'channel-closed'],
  [/^Connection closed/, 'connection-closed'],
];

/**
 * What an amqplib error's text says it was; undefined when it says none of these.
 * @example amqplibTextFailure('Handshake terminated by server: 403 (ACCESS-REFUSED) with message "..."') // 'login-refused'
 */
function amqplibTextFailure(message: string): AmqplibTextFailure | undefined {
  for (const [pattern, failure] of TEXT_FAILURES) if (pattern.test(message)) return failure;
  return undefined;
}

export { amqplibTextFailure };
