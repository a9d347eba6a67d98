import { createInterface } from 'node:readline/promises';
import { connectFromConfig } from '../amqp/connect-from-config.js';
import { GuardedOutput } from '../cli/guarded-output.js';
import type { Config } from '../config/config.js';
import type { CommandContext } from './context.js';
import { ParkedCommandError } from '../errors.js';
import { createProgress } from './progress.js';

/**
 * Opens a broker connection and a confirm channel for one parking-lot command, runs it, and always
 * closes. Ctrl-C once: the walk stops after the message in hand (nothing lost); twice: exit at once
 * (the broker keeps every message that was not acked).
 */
async function withParkingLot<T>(config: Config, queue: string, run: (ctx: CommandContext) => Promise<T>): Promise<T> {
  const broker = await connectFromConfig(config, { connectionName: 'boomerang-parked' });
  const abort = new AbortController();
  const onSigint = (): void => {
    if (abort.signal.aborted) process.exit(130);
    GuardedOutput.of(process.stderr).write('\nstopping after the message in hand (Ctrl-C again to quit at once; nothing is lost either way)\n');
    abort.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    const channel = await broker.connection.createConfirmChannel();
    let channelError: Error | undefined;
    channel.on('error', (error: Error) => {
      channelError = error;
    });
    const ctx: CommandContext = {
      channel,
      queue,
      publishTimeoutMs: config.publishTimeoutMs,
      signal: abort.signal,
      progress: (label, details) => createProgress({ label, details }),
    };
    try {
      return await run(ctx);
    } catch (error) {
      // checkQueue on a missing queue closes the channel with 404 (NOT_FOUND).
      if (replyCodeOf(channelError ?? error) === 404) {
        throw new ParkedCommandError(`there is no queue ${JSON.stringify(queue)} (PARKING_QUEUE, or --queue): check the name and the vhost`, { cause: error });
      }
      throw error;
    } finally {
      // Wait for close-ok, which comes once the broker processed the last acks: closing the connection
      // at once ended the channel before it had, and gave back messages the walk had already copied.
      await channel.close().catch(() => undefined);
    }
  } finally {
    process.off('SIGINT', onSigint);
    await broker.close();
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
