import net from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/**
 * A TCP proxy on 127.0.0.1 in front of a broker, for cutting connections on purpose: `cutAll()`
 * destroys both sides of every open connection at once, as a dropped network path would. New
 * connections are accepted again right after (a scheduler's next invocation reconnects).
 */
class TcpProxy {
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  /** Connections accepted so far. */
  public accepted = 0;
  private silent = false;

  private constructor(
    private readonly server: net.Server,
    public readonly port: number,
  ) {}

  public static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new TcpProxy(server, (server.address() as net.AddressInfo).port);
    server.on('connection', (client) => proxy.accept(client, targetPort, targetHost));
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  public url(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  /** Connections open right now. */
  public get open(): number {
    return this.pairs.size;
  }

  /** Destroys every open connection (both sides); returns how many there were. */
  public cutAll(): number {
    const pairs = [...this.pairs];
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    return pairs.length;
  }

  /**
   * From now on nothing passes in either direction, on the open connections and on new ones, which
   * stay open: a server that hangs, as opposed to one that drops connections.
   */
  public silence(): void {
    this.silent = true;
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
    }
  }

  public async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket, targetPort: number, targetHost: string): void {
    this.accepted++;
    const upstream = net.connect(targetPort, targetHost);
    const pair = { client, upstream };
    this.pairs.add(pair);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    if (this.silent) return;
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

/**
 * A proxy in front of the broker in `amqpUrl` for every test of the calling file: started before
 * them, closed after them. Returns the running proxy.
 */
function useProxyToBroker(amqpUrl: string): () => TcpProxy {
  let proxy: TcpProxy | undefined;
  beforeAll(async () => {
    const target = new URL(amqpUrl);
    proxy = await TcpProxy.start(Number(target.port || 5672), target.hostname);
  });
  afterAll(async () => {
    await proxy?.close();
  });
  return () => {
    if (!proxy) throw new Error('useProxyToBroker: the proxy is not started (call it at describe level)');
    return proxy;
  };
}

export { TcpProxy, useProxyToBroker };
