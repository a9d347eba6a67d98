import { createInterface } from 'node:readline/promises';
import type { ChannelModel } from 'amqplib';
import { brokerUrlsFromConfig } from '../amqp/broker-urls-from-config.js';
import { connectManaged } from '../amqp/managed-connection.js';
import { GuardedOutput } from '../observability/guarded-output.js';
import type { Config } from '../config/config.js';
import type { CommandContext } from './context.js';
import { ParkedCommandError } from '../errors.js';
import { createParkNotes } from './park-notes.js';
import { createProgress } from './progress.js';

/** Options of {@link withParkingLot}. */
type SessionOptions = {
  /**
   * Run the command again, on a fresh channel, after the connection dropped (amqp-connection-manager
   * reconnects): only for a command that carries on where it left off (`resumableReplay`). @default false
   */
  readonly resume?: boolean;
  /** Shown in the management UI's connection list. @default 'boomerang-parked' */
  readonly connectionName?: string;
};

/** Reconnects given up after this many in one command: a broker that keeps dropping needs a look. */
const MAX_RESUMES = 10;

/**
 * Opens a reconnecting broker connection and a confirm channel for one parking-lot command, runs it,
 * and always closes. With `resume`, a command the connection dropped under runs again once it is
 * back. Ctrl-C once: the walk stops after the message in hand (nothing lost); twice: exit at once
 * (the broker keeps every message that was not acked).
 */
async function withParkingLot<T>(config: Config, queue: string, run: (ctx: CommandContext) => Promise<T>, options: SessionOptions = {}): Promise<T> {
  const urls = await brokerUrlsFromConfig(config);
  const managed = await connectManaged({ urls, connectTimeoutMs: config.connectTimeoutMs, connectionName: options.connectionName ?? 'boomerang-parked' });
  const abort = new AbortController();
  const onSigint = (): void => {
    if (abort.signal.aborted) process.exit(130);
    GuardedOutput.of(process.stderr).write('\nstopping after the message in hand (Ctrl-C again to quit at once; nothing is lost either way)\n');
    abort.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    for (let resumes = 0; ; resumes++) {
      const drops = managed.drops;
      const resumable = (): boolean => options.resume === true && managed.drops !== drops && !abort.signal.aborted && resumes < MAX_RESUMES;
      try {
        const value = await runOnChannel(await managed.current(), config, queue, abort.signal, run);
        if (!resumable()) return value;
      } catch (error) {
        if (!resumable()) throw error;
      }
      GuardedOutput.of(process.stderr).write('\nthe connection dropped; carrying on once it is back (the message in hand may be replayed twice)\n');
    }
  } finally {
    process.off('SIGINT', onSigint);
    await managed.close();
  }
}

/** Runs one command on a fresh confirm channel of `connection`, and closes the channel. */
async function runOnChannel<T>(
  connection: ChannelModel,
  config: Config,
  queue: string,
  signal: AbortSignal,
  run: (ctx: CommandContext) => Promise<T>,
): Promise<T> {
  const channel = await connection.createConfirmChannel();
  let channelError: Error | undefined;
  channel.on('error', (error: Error) => {
    channelError = error;
  });
  const ctx: CommandContext = {
    channel,
    queue,
    publishTimeoutMs: config.publishTimeoutMs,
    prefetch: config.batchSize,
    signal,
    progress: (label, details) => createProgress({ label, details }),
    parkNotes: createParkNotes(connection, queue),
  };
  try {
    return await run(ctx);
  } catch (error) {
    // checkQueue on a missing queue closes the channel with 404 (NOT_FOUND).
    if (replyCodeOf(channelError ?? error) === 404) {
      throw new ParkedCommandError(
        `there is no queue ${JSON.stringify(queue)}: check the name and the vhost, or choose the lot with --function <name> or --parking-queue <name>`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    // Wait for close-ok, which comes once the broker processed the last acks: closing the connection
    // at once ended the channel before it had, and gave back messages the walk had already copied.
    await channel.close().catch(() => undefined);
  }
}

/** The broker's reply code an amqplib channel or connection close carries. */
function replyCodeOf(error: unknown): unknown {
  return (error as { code?: unknown } | undefined)?.code;
}

/** Asks a yes/no question on the terminal; only `y` or `yes` is a yes. */
async function askYes(question: string): Promise<boolean> {
  const readline = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await readline.question(question)).trim());
  } finally {
    readline.close();
  }
}

export { askYes, withParkingLot };
