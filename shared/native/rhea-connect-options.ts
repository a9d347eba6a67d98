/**
 * The rhea connection options for one broker URL. Pure: no socket, no DNS. It reads the same
 * `amqp://` / `amqps://` URLs as the amqplib path, so one AMQP_URL (or one secret) serves both clients.
 */
import { isIP } from 'node:net';
import { loginOfUrl, vhostOfUrl } from '../amqp/broker-endpoints.js';

/** How to reach one broker URL: the socket to dial, and the open frame to send on it. */
type RheaConnectOptions = {
  /** For our own connect function: only these reach net.connect / tls.connect. */
  readonly dial: {
    /** Without brackets, as net.connect takes it. */
    readonly host: string;
    readonly port: number;
    /** `amqps://`: TLS with certificate verification always on, as on the amqplib path. */
    readonly tls: boolean;
    /** SNI name; `''` for an IP address, which TLS does not allow as a server name. */
    readonly servername: string;
  };
  /** rhea's connection options. */
  readonly open: {
    readonly username: string;
    readonly password: string;
    /** RabbitMQ 4.x reads the vhost from the open frame's hostname, as `vhost:<name>`. */
    readonly hostname: string;
    readonly container_id: string;
    /** Shown in the management UI's connection list, as amqplib's `connection_name`. */
    readonly properties: { readonly connection_name: string };
    /** A connection lives for one invocation: nothing to reconnect. */
    readonly reconnect: false;
    /** Settlements are small frames: without it they wait for Nagle's 40 ms timer. */
    readonly tcp_no_delay: true;
    /** The broker sends a heartbeat every half of it, so a dead broker is noticed mid-invocation. */
    readonly idle_time_out: number;
  };
};

/** amqplib's 5 s heartbeat, as AMQP 1.0 states it (the peer's silence allowed, in ms). */
const IDLE_TIME_OUT_MS = 10_000;

/**
 * The rhea options for `url`. User name and password are read as amqplib reads them (`loginOfUrl`:
 * `%uXXXX` for non-ASCII characters; no user in the URL means guest/guest).
 * @example
 * rheaConnectOptions('amqps://app:p%u00E4ss@b-1.mq.eu-west-1.amazonaws.com/prod', 'orders-retry-4f2a')
 * // { dial: { host: 'b-1.mq...', port: 5671, tls: true, servername: 'b-1.mq...' },
 * //   open: { username: 'app', password: 'päss', hostname: 'vhost:prod', ... } }
 */
function rheaConnectOptions(url: string, containerId: string, connectionName: string): RheaConnectOptions {
  const parsed = new URL(url);
  const tls = parsed.protocol === 'amqps:';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return {
    dial: { host, port: parsed.port === '' ? (tls ? 5671 : 5672) : Number(parsed.port), tls, servername: isIP(host) === 0 ? host : '' },
    open: {
      ...loginOfUrl(parsed),
      hostname: `vhost:${vhostOfUrl(url)}`,
      container_id: containerId,
      properties: { connection_name: connectionName },
      reconnect: false,
      tcp_no_delay: true,
      idle_time_out: IDLE_TIME_OUT_MS,
    },
  };
}

export { rheaConnectOptions };
export type { RheaConnectOptions };
