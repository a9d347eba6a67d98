/**
 * The CPU the broker itself uses, read beside each timed run: on a 2-core machine the broker and the
 * client share the cores, and a run the broker cannot serve faster shows no client's speed. Read from
 * Linux's /proc, for a broker on this machine only: the process that listens on the AMQP URL's port
 * (found through /proc/net/tcp and the processes' socket descriptors; a broker in a chroot is one of them).
 * Elsewhere, or for a remote broker, there is no reading and the bench's rows leave the figure out.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Reads the broker's CPU so far (user + system), in ms. */
type BrokerCpu = () => number;

const LISTEN = '0A';
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
/** Linux's clock ticks a second (`getconf CLK_TCK`): 100 on every Linux the bench runs on. */
const TICKS_PER_SECOND = 100;

/**
 * The socket inodes listening on `port`, from the text of /proc/net/tcp or /proc/net/tcp6. Pure.
 * @example listeningInodes('  0: 0100007F:1612 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 9898 1 ...', 5650) // ['9898']
 */
function listeningInodes(table: string, port: number): string[] {
  const inodes: string[] = [];
  for (const line of table.split('\n')) {
    const fields = line.trim().split(/\s+/);
    const local = fields[1];
    if (local === undefined || fields[3] !== LISTEN) continue;
    const hexPort = local.slice(local.lastIndexOf(':') + 1);
    if (Number.parseInt(hexPort, 16) === port && fields[9] !== undefined) inodes.push(fields[9]);
  }
  return inodes;
}

/**
 * User + system time in ms from the text of /proc/<pid>/stat. Pure. The command name (field 2) may
 * hold spaces and parentheses, so the fields are counted after its closing parenthesis.
 * @example cpuMsOfStat('42 (beam.smp) S 1 42 42 0 -1 4194560 0 0 0 0 150 25 0 0') // 1750
 */
function cpuMsOfStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3, utime field 14 and stime field 15 (1-based, proc(5)).
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** The pid that holds one of `inodes` open, scanning /proc; undefined when none can be seen. */
function pidHolding(inodes: readonly string[]): number | undefined {
  const wanted = new Set(inodes.map((inode) => `socket:[${inode}]`));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let descriptors: string[];
    try {
      descriptors = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of descriptors) {
      try {
        if (wanted.has(readlinkSync(`/proc/${entry}/fd/${fd}`))) return Number(entry);
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

/**
 * A reader of the CPU of the broker behind `url`, or undefined when it is not a process of this
 * Linux machine that this user can see.
 * @example const cpu = brokerCpu('amqp://guest:guest@127.0.0.1:5672'); const before = cpu?.();
 */
function brokerCpu(url: string): BrokerCpu | undefined {
  const parsed = new URL(url);
  if (!LOCAL_HOSTS.has(parsed.hostname) || process.platform !== 'linux') return undefined;
  const port = parsed.port === '' ? (parsed.protocol === 'amqps:' ? 5671 : 5672) : Number(parsed.port);
  try {
    const inodes = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) => {
      try {
        return listeningInodes(readFileSync(file, 'utf8'), port);
      } catch {
        return [];
      }
    });
    const pid = inodes.length === 0 ? undefined : pidHolding(inodes);
    if (pid === undefined) return undefined;
    const read = (): number => cpuMsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    // Read once here: a process this user cannot read gives no reader, not a failure mid-run.
    read();
    return read;
  } catch {
    return undefined;
  }
}

/**
 * Runs `work` and says what CPU (ms) the broker used meanwhile: undefined without a reader.
 * @example const [timing, brokerMs] = await duringWork(brokerCpu(url), () => runContestant(...));
 */
async function duringWork<T>(read: BrokerCpu | undefined, work: () => Promise<T>): Promise<[T, number | undefined]> {
  const before = read?.();
  const result = await work();
  return [result, read === undefined || before === undefined ? undefined : read() - before];
}

export { brokerCpu, cpuMsOfStat, duringWork, listeningInodes };
export type { BrokerCpu };
