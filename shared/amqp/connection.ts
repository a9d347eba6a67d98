import { connect, type ChannelModel } from 'amqplib';
import { BrokerConnectionError } from '../errors.js';
import { redactText, redactUrl } from '../observability/redact.js';
import { connectError, everyFinal } from './connect-error.js';
import { type ConnectFailure, explainConnectFailure } from './connect-failure.js';

type ConnectOptions = {
  /** Tried in turn (round robin) until one answers or the timeout passes. */
  readonly urls: readonly string[];
  readonly connectTimeoutMs: number;
  /** Shown in the management UI's connection list. */
  readonly connectionName: string;
  /** @default 5 */
  readonly heartbeatSeconds?: number;
};

/** One invocation's broker connection. Always `close()` it, whatever happened. */
type BrokerConnection = {
  readonly connection: ChannelModel;
  /** The endpoint that answered, password redacted. */
  readonly endpoint: string;
  /** Resolves with the cause when the connection drops before `close()`. */
  readonly lost: Promise<Error>;
  close(): Promise<void>;
};

/**
 * Connects with plain amqplib (a connection lives for one invocation: nothing to reconnect), round
 * robin over the endpoints until one answers or `connectTimeoutMs` passes. On timeout, refusal or a
 * misconfiguration a `BrokerConnectionError` names each endpoint (without passwords), what went wrong
 * there and what to check. It gives up at once when every endpoint failed in a way another attempt
 * cannot mend (login, vhost, TLS certificate), and waits out the timeout otherwise (a broker that is
 * restarting refuses connections for a few seconds).
 */
async function connectBroker(options: ConnectOptions): Promise<BrokerConnection> {
  const deadline = Date.now() + options.connectTimeoutMs;
  const failures = new Map<string, ConnectFailure>();
  let lastError: unknown = new Error('no attempt made');
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const url = options.urls[attempt % options.urls.length] as string;
    if (failures.get(url)?.final !== true) {
      try {
        return opened(await connect(withHeartbeat(url, options.heartbeatSeconds ?? 5), socketOptions(options, deadline - Date.now())), url);
      } catch (error) {
        lastError = error;
        failures.set(url, explainConnectFailure(error, url));
      }
    }
    if (everyFinal(options.urls, failures)) break;
    // After a round over every endpoint, pause before the next: a restarting broker needs a moment.
    if (attempt % options.urls.length === options.urls.length - 1) await sleep(Math.min(RETRY_PAUSE_MS, deadline - Date.now()));
  }
  throw connectError(options.urls, options.connectTimeoutMs, failures, lastError);
}

const RETRY_PAUSE_MS = 200;

function socketOptions(options: ConnectOptions, remainingMs: number): Record<string, unknown> {
  return {
    // Without it, small frames (acks, confirms) wait for Nagle's 40 ms timer.
    noDelay: true,
    timeout: Math.max(1, remainingMs),
    clientProperties: { connection_name: options.connectionName },
  };
}

/** The URL with `heartbeat` set, unless it sets its own. */
function withHeartbeat(url: string, heartbeatSeconds: number): string {
  try {
    const parsed = new URL(url);
    if (parsed.searchParams.has('heartbeat')) return url;
    parsed.searchParams.set('heartbeat', String(heartbeatSeconds));
    return parsed.toString();
  } catch {
    // amqplib reports a URL that does not parse, with the URL redacted by the caller.
    return url;
  }
}

/** Wraps an open connection: `lost` resolves when it drops before `close()`. */
function opened(connection: ChannelModel, url: string): BrokerConnection {
  let closing = false;
  const lost = new Promise<Error>((resolve) => {
    // amqplib emits 'error' before 'close' for a connection the broker closed; without a listener it would throw.
    connection.on('error', () => undefined);
    connection.once('close', (err?: Error) => {
      if (!closing)
        resolve(
          new BrokerConnectionError(`Lost the connection to the broker: ${redactText(err?.message ?? 'closed')}`, { cause: err, reason: 'connection-lost' }),
        );
    });
  });
  return {
    connection,
    endpoint: redactUrl(url),
    lost,
    async close() {
      closing = true;
      await connection.close().catch(() => undefined);
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

export { connectBroker };
export type { BrokerConnection };
