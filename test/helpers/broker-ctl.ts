import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { redactUrl } from '../../shared/observability/redact.js';
import { AMQP_URL } from './broker.js';
import { REPO_ROOT } from './invoke-child.js';

const NODE_SCRIPT = join(REPO_ROOT, 'test/cluster/rabbit-node.sh');
const ROOTFS_SCRIPT = join(REPO_ROOT, 'test/brokers/rabbitmq4-rootfs.sh');

/**
 * Where a node's RabbitMQ comes from: the machine's own (3.10 here), Debian sid's 4.3 (`4`) or Debian
 * trixie's 4.0 (`4.0`), each in its chroot (test/brokers/rabbitmq4-rootfs.sh).
 */
type NodeFlavour = 'system' | '4' | '4.0';

/** Every flavour, in the order their nodes are listed. */
const FLAVOURS: readonly NodeFlavour[] = ['system', '4', '4.0'];

/** The Debian suite of a chroot flavour's RabbitMQ (rabbitmq4-rootfs.sh reads it as RABBITMQ4_SUITE). */
const CHROOT_SUITES = { '4': 'sid', '4.0': 'trixie' } as const;

/** A private node that test/cluster/rabbit-node.sh made (it has a folder, running or not). */
type PrivateNode = { readonly name: string; readonly port: number; readonly flavour: NodeFlavour };

/** Who serves an AMQP URL: the machine's own broker (rabbit@localhost), or one private node. */
type BrokerNode = { readonly kind: 'system'; readonly flavour: 'system' } | ({ readonly kind: 'private' } & PrivateNode);

/** The port of rabbit@localhost; private nodes refuse it (rabbit-node.sh). */
const SYSTEM_PORT = 5672;
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The node that serves `url`, from its port: rabbitmqctl must talk to that node, and a broker test
 * that talked to another one would check the wrong broker. A list of URLs (a cluster) is named by
 * its first. Throws, naming the URL, when no single node on this machine can be told to serve it.
 */
function resolveBrokerNode(url: string, privateNodes: readonly PrivateNode[]): BrokerNode {
  const first = url.split(',')[0]?.trim() ?? '';
  const shown = redactUrl(url);
  let parsed: URL;
  try {
    parsed = new URL(first);
  } catch {
    throw new Error(`Cannot tell which RabbitMQ node serves AMQP_URL=${shown}: it is not a URL.`);
  }
  if (!LOCAL_HOSTS.has(parsed.hostname)) {
    throw new Error(`Cannot tell which RabbitMQ node serves AMQP_URL=${shown}: rabbitmqctl reaches only nodes on this machine (127.0.0.1 or localhost).`);
  }
  const port = parsed.port === '' ? SYSTEM_PORT : Number(parsed.port);
  if (port === SYSTEM_PORT) return { kind: 'system', flavour: 'system' };
  const matches = privateNodes.filter((node) => node.port === port);
  const [only] = matches;
  if (matches.length === 1 && only) return { kind: 'private', ...only };
  if (matches.length === 0) {
    throw new Error(
      `Cannot tell which RabbitMQ node serves AMQP_URL=${shown}: no node this project runs uses port ${port}. ` +
        'Use 5672 (the system broker), or start a node first (npm run rabbitmq4 -- start gives 5674, npm run rabbitmq40 -- start gives 5675).',
    );
  }
  const names = matches.map((node) => `${node.name} (flavour ${node.flavour})`).join(', ');
  throw new Error(`Cannot tell which RabbitMQ node serves AMQP_URL=${shown}: ${names} all use port ${port}. Wipe the stale one (rabbit-node.sh wipe <name>).`);
}

/** Every private node of every flavour, from the folders rabbit-node.sh keeps. */
function listPrivateNodes(): PrivateNode[] {
  return FLAVOURS.flatMap((flavour) =>
    execFileSync('bash', [NODE_SCRIPT, 'list'], { cwd: REPO_ROOT, env: flavourEnv(flavour), encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const [name = '', port = ''] = line.split(' ');
        return { name, port: Number(port), flavour };
      }),
  );
}

function flavourEnv(flavour: NodeFlavour): NodeJS.ProcessEnv {
  const suite = flavour === 'system' ? {} : { RABBITMQ4_SUITE: CHROOT_SUITES[flavour] };
  return { ...process.env, RABBIT_FLAVOUR: flavour, ...suite };
}

/** rabbitmqctl and rabbitmq-queues against the node that serves an AMQP URL (by default the tests' own). */
class BrokerCtl {
  private constructor(public readonly node: BrokerNode) {}

  public static forUrl(url: string = AMQP_URL): BrokerCtl {
    return new BrokerCtl(resolveBrokerNode(url, listPrivateNodes()));
  }

  /** The flavour of the broker under test: private nodes a test starts must be of the same one. */
  public get flavour(): NodeFlavour {
    return this.node.flavour;
  }

  /** rabbitmqctl with `args`; resolves with its stdout. */
  public ctl(args: readonly string[]): Promise<string> {
    return this.run('rabbitmqctl', 'ctl', args, '');
  }

  /** `rabbitmqctl import_definitions` of `definitions` (JSON text). */
  public async importDefinitions(definitions: string): Promise<void> {
    const args = ['--quiet', 'import_definitions', '--format', 'json'];
    // 4.x's rabbitmqctl (OTP 29) cannot read stdin from a pipe (FunctionClauseError in prim_tty.read/2):
    // it gets a file inside its chroot, where it runs.
    if (this.flavour !== 'system') {
      const name = `/tmp/boomerang-definitions-${randomUUID()}.json`;
      const onHost = join(execFileSync('bash', [ROOTFS_SCRIPT, 'path'], { encoding: 'utf8', env: flavourEnv(this.flavour) }).trim(), name);
      await writeFile(onHost, definitions);
      try {
        await this.ctl([...args, name]);
      } finally {
        await rm(onHost, { force: true });
      }
      return;
    }
    // Through stdin: Debian's wrapper runs rabbitmqctl as the rabbitmq user, who cannot read a private temporary file.
    await this.run('rabbitmqctl', 'ctl', args, definitions);
  }

  /** rabbitmq-queues with `args`; resolves with stdout. */
  public queues(args: readonly string[]): Promise<string> {
    return this.run('rabbitmq-queues', 'queues', args, '');
  }

  private run(program: string, scriptCommand: string, args: readonly string[], input: string): Promise<string> {
    const node = this.node;
    // The system broker through Debian's wrapper (it switches to the rabbitmq user and its cookie).
    const [file, argv, env] =
      node.kind === 'system' ? [program, [...args], process.env] : ['bash', [NODE_SCRIPT, scriptCommand, node.name, ...args], flavourEnv(node.flavour)];
    return new Promise((resolve, reject) => {
      const child = execFile(file, argv, { cwd: REPO_ROOT, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${program} ${args.join(' ')} against ${describeNode(node)} failed: ${stderr.trim() || error.message}`, { cause: error }));
        else resolve(stdout);
      });
      child.stdin?.end(input);
    });
  }
}

function describeNode(node: BrokerNode): string {
  return node.kind === 'system' ? 'rabbit@localhost (system)' : `${node.name}@localhost (flavour ${node.flavour})`;
}

export { BrokerCtl, flavourEnv, resolveBrokerNode };
export type { BrokerNode, NodeFlavour, PrivateNode };
