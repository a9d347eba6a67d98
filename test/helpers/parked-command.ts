import type { ConfirmChannel } from 'amqplib';
import type { CommandContext } from '../../shared/parked/context.js';
import { createParkNotes } from '../../shared/parked/park-notes.js';
import type { TestBroker } from './broker.js';
import { RecordingProgress } from './fakes.js';

/** Runs a parking-lot command the way the CLI does: its own confirm channel, the lot's park notes, closed (waiting for close-ok) afterwards; returns what it printed. */
async function runParkedCommand<T>(b: TestBroker, queue: string, command: (ctx: CommandContext) => Promise<T>): Promise<{ result: T; printed: string[] }> {
  const channel: ConfirmChannel = await b.connection.createConfirmChannel();
  // As the CLI's session does: a channel the broker closes (403 from a second reader) must not throw on the connection.
  channel.on('error', () => undefined);
  const progress = new RecordingProgress();
  try {
    const result = await command({ channel, queue, publishTimeoutMs: 5000, progress: () => progress, parkNotes: createParkNotes(b.connection, queue) });
    return { result, printed: progress.printed };
  } finally {
    await channel.close().catch(() => undefined);
  }
}

export { runParkedCommand };
