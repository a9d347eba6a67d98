import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './invoke-child.js';

const run = promisify(execFile);
const NODE_SCRIPT = join(REPO_ROOT, 'test/cluster/rabbit-node.sh');
const CLUSTER_SCRIPT = join(REPO_ROOT, 'test/cluster/cluster.sh');

/**
 * A private RabbitMQ node (own name, ports, data, cookie) for the scenarios that stop brokers; it is
 * never rabbit@localhost. See test/cluster/rabbit-node.sh.
 */
class PrivateRabbit {
  public constructor(
    /** Short node name, e.g. `boomerang-f1` for boomerang-f1@localhost. */
    public readonly name: string,
    public readonly port: number,
    /** A TLS listener's port, served with the certificates given to `start`. */
    public readonly tlsPort?: number,
  ) {}

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
    await scriptWithEnv(tls, NODE_SCRIPT, 'start', this.name, String(this.port));
  }

  /** Swaps the TLS certificate of the running node; new connections get the one in `tlsDir`. */
  public async rotateTls(tlsDir: string): Promise<void> {
    await script(NODE_SCRIPT, 'tls', this.name, tlsDir);
  }

  /** Stops the Erlang VM and waits until its process is gone; the data stays. */
  public async stop(): Promise<void> {
    await script(NODE_SCRIPT, 'stop', this.name);
  }

  /** Deletes its data; the node must be stopped. */
  public async wipe(): Promise<void> {
    await script(NODE_SCRIPT, 'wipe', this.name);
  }

  /** rabbitmqctl against this node; resolves with its stdout. */
  public async ctl(...args: string[]): Promise<string> {
    return script(NODE_SCRIPT, 'ctl', this.name, ...args);
  }
}

async function script(path: string, ...args: string[]): Promise<string> {
  return scriptWithEnv({}, path, ...args);
}

async function scriptWithEnv(env: Readonly<Record<string, string>>, path: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('bash', [path, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** The 3-node cluster of test/cluster/cluster.sh. */
const Cluster = {
  nodes: [new PrivateRabbit('boomerang-c1', 5691), new PrivateRabbit('boomerang-c2', 5692), new PrivateRabbit('boomerang-c3', 5693)],
  start: (): Promise<string> => script(CLUSTER_SCRIPT, 'start'),
  stop: (): Promise<string> => script(CLUSTER_SCRIPT, 'stop'),
  /** Exit status 0 when the node answers. */
  isRunning: async (node: PrivateRabbit): Promise<boolean> => {
    try {
      await script(NODE_SCRIPT, 'running', node.name);
      return true;
    } catch {
      return false;
    }
  },
};

export { Cluster, PrivateRabbit };
