import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BrokerCtl, flavourEnv, type NodeFlavour } from './broker-ctl.js';
import { REPO_ROOT } from './invoke-child.js';

const run = promisify(execFile);
const NODE_SCRIPT = join(REPO_ROOT, 'test/cluster/rabbit-node.sh');
const CLUSTER_SCRIPT = join(REPO_ROOT, 'test/cluster/cluster.sh');
/**
 * Chroot nodes sit this far above their 3.10 counterparts and take their own name (4.3: `-r4-`, 4.0:
 * `-r40-`), so all can run at once.
 */
const CHROOT_NODES = { '4': { offset: 100, infix: 'r4-' }, '4.0': { offset: 200, infix: 'r40-' } } as const;

/**
 * A private RabbitMQ node (own name, ports, data, cookie) for the scenarios that stop brokers; it is
 * never rabbit@localhost. See test/cluster/rabbit-node.sh.
 */
class PrivateRabbit {
  public constructor(
    /** Short node name, e.g. `boomerang-f1` for boomerang-f1@localhost. */
    public readonly name: string,
    public readonly port: number,
    /** The machine's own RabbitMQ, or the 4.x of the chroot (test/brokers/rabbitmq4-rootfs.sh). */
    public readonly flavour: NodeFlavour = 'system',
    /** A TLS listener's port, served with the certificates given to `start`. */
    public readonly tlsPort?: number,
  ) {}

  /**
   * The node `boomerang-<role>` on `port` (and `tlsPort`), of the same flavour as the broker under
   * test (AMQP_URL), so a fault scenario run against 4.3 restarts a 4.3 node: 4.3 gives
   * `boomerang-r4-<role>` with both ports 100 higher, 4.0 `boomerang-r40-<role>` with both 200 higher.
   */
  public static likeBrokerUnderTest(role: string, port: number, tlsPort?: number): PrivateRabbit {
    const flavour = BrokerCtl.forUrl().flavour;
    if (flavour === 'system') return new PrivateRabbit(`boomerang-${role}`, port, 'system', tlsPort);
    const { offset, infix } = CHROOT_NODES[flavour];
    const shift = (p: number | undefined): number | undefined => (p === undefined ? undefined : p + offset);
    return new PrivateRabbit(`boomerang-${infix}${role}`, port + offset, flavour, shift(tlsPort));
  }

  public get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  /** `amqps://` on the TLS port, by IP: the test certificates name 127.0.0.1. */
  public get tlsUrl(): string {
    return `amqps://guest:guest@127.0.0.1:${this.tlsPort}`;
  }

  /**
   * Starts it (a running node is left alone); resolves once it accepts AMQP connections. With a
   * `tlsPort`, `tlsDir` holds ca.pem, server.pem and server-key.pem.
   */
  public async start(tlsDir?: string): Promise<void> {
    const tls: Record<string, string> = this.tlsPort === undefined ? {} : { RABBIT_TLS_PORT: String(this.tlsPort), RABBIT_TLS_DIR: tlsDir ?? '' };
    await script(this.flavour, tls, NODE_SCRIPT, 'start', this.name, String(this.port));
  }

  /** Swaps the TLS certificate of the running node; new connections get the one in `tlsDir`. */
  public async rotateTls(tlsDir: string): Promise<void> {
    await script(this.flavour, {}, NODE_SCRIPT, 'tls', this.name, tlsDir);
  }

  /** Stops the Erlang VM and waits until its process is gone; the data stays. */
  public async stop(): Promise<void> {
    await script(this.flavour, {}, NODE_SCRIPT, 'stop', this.name);
  }

  /** Deletes its data; the node must be stopped. */
  public async wipe(): Promise<void> {
    await script(this.flavour, {}, NODE_SCRIPT, 'wipe', this.name);
  }

  /** rabbitmqctl against this node; resolves with its stdout. */
  public async ctl(...args: string[]): Promise<string> {
    return script(this.flavour, {}, NODE_SCRIPT, 'ctl', this.name, ...args);
  }

  /** Exit status 0 when the node answers. */
  public async isRunning(): Promise<boolean> {
    try {
      await script(this.flavour, {}, NODE_SCRIPT, 'running', this.name);
      return true;
    } catch {
      return false;
    }
  }
}

async function script(flavour: NodeFlavour, env: Readonly<Record<string, string>>, path: string, ...args: string[]): Promise<string> {
  const fullEnv = { ...flavourEnv(flavour), ...env };
  const { stdout } = await run('bash', [path, ...args], { cwd: REPO_ROOT, env: fullEnv, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** The 3-node cluster of test/cluster/cluster.sh, of the broker under test's flavour (c1..c3 on 5691-5693, or 4.x on 5791-5793). */
class Cluster {
  public readonly nodes: readonly [PrivateRabbit, PrivateRabbit, PrivateRabbit];

  public constructor(public readonly flavour: NodeFlavour) {
    // cluster.sh has no 4.0 nodes: the cluster test runs on the 3.10 and 4.3 legs.
    if (flavour === '4.0') throw new Error('No 3-node RabbitMQ 4.0 cluster: run the cluster test against 3.10 (5672) or 4.3 (5674).');
    const node = (i: number): PrivateRabbit =>
      flavour === '4' ? new PrivateRabbit(`boomerang-r4-c${i}`, 5790 + i, '4') : new PrivateRabbit(`boomerang-c${i}`, 5690 + i, 'system');
    this.nodes = [node(1), node(2), node(3)];
  }

  public static likeBrokerUnderTest(): Cluster {
    return new Cluster(BrokerCtl.forUrl().flavour);
  }

  public start(): Promise<string> {
    return script(this.flavour, {}, CLUSTER_SCRIPT, 'start');
  }

  public stop(): Promise<string> {
    return script(this.flavour, {}, CLUSTER_SCRIPT, 'stop');
  }
}

export { Cluster, PrivateRabbit };
