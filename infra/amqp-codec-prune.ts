/**
 * amqplib's protocol codec (`lib/defs.js`, generated from the AMQP 0-9-1 spec) holds an encoder and a
 * decoder for every method, for both peers: 78 KB of the 110 KB amqplib puts in a bundle. A client
 * never encodes a method only a server sends (connection.start, basic.deliver…) and never decodes
 * one only a client sends (basic.publish, queue.declare…), so the bundles drop those two halves:
 * about 18 KB. Every method a client may send keeps its encoder, whether Boomerang uses it or not,
 * and every method a server may send keeps its decoder.
 *
 * Who sends what is the spec's `chassis` of each method, plus RabbitMQ's extensions (consumer cancel
 * notifications, publisher confirms, blocked connections, update-secret). A dropped half throws an
 * error naming the method, should it ever be called after all.
 */

/** Methods only a server sends: their encoders go. */
const SENT_BY_SERVER_ONLY: readonly string[] = [
  'ConnectionStart', 'ConnectionSecure', 'ConnectionTune', 'ConnectionOpenOk', 'ConnectionBlocked', 'ConnectionUnblocked', 'ConnectionUpdateSecretOk',
  'ChannelOpenOk', 'AccessRequestOk',
  'ExchangeDeclareOk', 'ExchangeDeleteOk', 'ExchangeBindOk', 'ExchangeUnbindOk',
  'QueueDeclareOk', 'QueueBindOk', 'QueuePurgeOk', 'QueueDeleteOk', 'QueueUnbindOk',
  'BasicQosOk', 'BasicConsumeOk', 'BasicReturn', 'BasicDeliver', 'BasicGetOk', 'BasicGetEmpty', 'BasicRecoverOk',
  'TxSelectOk', 'TxCommitOk', 'TxRollbackOk', 'ConfirmSelectOk',
];

/** Methods only a client sends: their decoders go. */
const SENT_BY_CLIENT_ONLY: readonly string[] = [
  'ConnectionStartOk', 'ConnectionSecureOk', 'ConnectionTuneOk', 'ConnectionOpen', 'ConnectionUpdateSecret',
  'ChannelOpen', 'AccessRequest',
  'ExchangeDeclare', 'ExchangeDelete', 'ExchangeBind', 'ExchangeUnbind',
  'QueueDeclare', 'QueueBind', 'QueuePurge', 'QueueDelete', 'QueueUnbind',
  'BasicQos', 'BasicConsume', 'BasicPublish', 'BasicGet', 'BasicReject', 'BasicRecoverAsync', 'BasicRecover',
  'TxSelect', 'TxCommit', 'TxRollback', 'ConfirmSelect',
];

/**
 * Methods either peer sends (and the content header): both halves stay. `basic.cancel-ok` is here
 * although only servers send it today: a client may answer a server's `basic.cancel` with it.
 */
const SENT_BY_BOTH: readonly string[] = [
  'ConnectionClose', 'ConnectionCloseOk', 'ChannelFlow', 'ChannelFlowOk', 'ChannelClose', 'ChannelCloseOk',
  'BasicCancel', 'BasicCancelOk', 'BasicAck', 'BasicNack', 'BasicProperties',
];

/** The helper every dropped half calls; a function declaration, so it is hoisted over the whole file. */
const LEFT_OUT_HELPER = `
function boomerangLeftOut(what) {
  throw new Error('amqplib ' + what + ' was left out of this bundle: a client never needs it (infra/amqp-codec-prune.ts)');
}
`;

/**
 * `defs.js` with the encoders of server-only methods and the decoders of client-only methods
 * replaced by one-line throwers. Throws, naming the method, when `defs.js` has a method the tables
 * above do not classify or lacks one they name: a new amqplib must be looked at before it is pruned.
 */
function pruneAmqpCodec(source: string): string {
  const defined = new Set([...source.matchAll(/^function (?:encode|decode)([A-Za-z]+)\(/gm)].map((m) => m[1] as string));
  const classified = [...SENT_BY_SERVER_ONLY, ...SENT_BY_CLIENT_ONLY, ...SENT_BY_BOTH];
  const unknown = [...defined].filter((name) => !classified.includes(name));
  const missing = classified.filter((name) => !defined.has(name));
  if (unknown.length > 0 || missing.length > 0) {
    throw new Error(`amqplib's lib/defs.js does not have the methods infra/amqp-codec-prune.ts expects (not classified: ${unknown.join(', ') || 'none'}; not found: ${missing.join(', ') || 'none'}). Classify them by who sends them before bundling this amqplib.`);
  }
  let pruned = source;
  for (const [kind, names] of [['encode', SENT_BY_SERVER_ONLY], ['decode', SENT_BY_CLIENT_ONLY]] as const) {
    for (const name of names) {
      // Generated code: each function starts at column 0 and its closing brace is the first one there.
      const body = new RegExp(`^function ${kind}${name}\\(([^)]*)\\) \\{\\n[\\s\\S]*?^\\}$`, 'm');
      if (!body.test(pruned)) throw new Error(`amqplib's lib/defs.js: cannot find the body of ${kind}${name} to prune (infra/amqp-codec-prune.ts)`);
      pruned = pruned.replace(body, `function ${kind}${name}($1) {\n  return boomerangLeftOut('${kind} ${name}');\n}`);
    }
  }
  return pruned + LEFT_OUT_HELPER;
}

export { pruneAmqpCodec, SENT_BY_BOTH, SENT_BY_CLIENT_ONLY, SENT_BY_SERVER_ONLY };
