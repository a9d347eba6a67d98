import { describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../../shared/observability/logger.js';
import { createRetentionFunction } from '../../shared/parked/retention-function.js';
import { defineQueue } from '../../shared/queues/define-queue.js';
import { agedLot } from '../helpers/aged-lot.js';
import { AMQP_URL } from '../helpers/broker.js';
import { useTestBroker } from '../helpers/topology.js';

const broker = useTestBroker();

/** A logger that keeps its lines. */
function recordingLog(): Logger & { readonly lines: { level: string; message: string; fields: LogFields }[] } {
  const lines: { level: string; message: string; fields: LogFields }[] = [];
  const at =
    (level: string) =>
    (message: string, fields: LogFields = {}) => {
      lines.push({ level, message, fields });
    };
  const log = { lines, debugEnabled: false, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  return log;
}

/** A declared queue on `work` that keeps parked messages `olderThan`. */
function retainingQueue(work: string, olderThan: string) {
  return defineQueue({ name: 'retention-test', handler: async () => undefined, workQueue: work, deploy: { retention: { olderThan } } }).queue;
}

describe('createRetentionFunction', () => {
  it('deletes the messages parked at least olderThan ago, keeps the others in order, and logs how many of each', async () => {
    // Prepare: m-0 ... m-5 parked 0 ... 5 days ago
    const { work, parked } = await agedLot(broker());
    const log = recordingLog();
    const handler = createRetentionFunction(retainingQueue(work, '3d'), { env: { AMQP_URL }, log });
    // Act
    const result = await handler({}, { getRemainingTimeInMillis: () => 60_000 });
    // Assess
    expect(result).toEqual({ parkingQueue: parked, olderThanMs: 3 * 86_400_000, purged: 3, kept: 3, total: 6, ending: 'done' });
    expect((await broker().drain(parked, 3)).map((m) => m.properties.messageId)).toEqual(['m-0', 'm-1', 'm-2']);
    expect(await broker().messageCount(parked)).toBe(0);
    expect(log.lines).toEqual([{ level: 'info', message: 'retention', fields: expect.objectContaining({ parkingQueue: parked, purged: 3, kept: 3 }) }]);
  });

  it('leaves a lot with nothing old enough as it was', async () => {
    // Prepare
    const { parked, work } = await agedLot(broker());
    const handler = createRetentionFunction(retainingQueue(work, '30d'), { env: { AMQP_URL }, log: recordingLog() });
    // Act
    const result = await handler({});
    // Assess
    expect(result).toMatchObject({ purged: 0, kept: 6, ending: 'done' });
    expect((await broker().drain(parked, 6)).map((m) => m.properties.messageId)).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4', 'm-5']);
  });

  it('fails the invocation, naming the queue, and logs why, when the parking lot does not exist', async () => {
    // Prepare
    const log = recordingLog();
    const work = `missing-${Date.now()}`;
    const handler = createRetentionFunction(retainingQueue(work, '3d'), { env: { AMQP_URL }, log });
    // Act + Assess
    await expect(handler({})).rejects.toMatchObject({ name: 'ParkedCommandError', message: expect.stringContaining(`${work}.parked`) });
    expect(log.lines).toEqual([
      {
        level: 'error',
        message: expect.stringContaining('retention failed'),
        fields: expect.objectContaining({ parkingQueue: `${work}.parked`, errorName: 'ParkedCommandError' }),
      },
    ]);
  });

  it('refuses a queue without deploy.retention, naming it and the option', () => {
    // Prepare
    const { queue } = defineQueue({ name: 'no-retention', handler: async () => undefined, workQueue: 'no-retention' });
    // Act + Assess
    expect(() => createRetentionFunction(queue)).toThrow(
      expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining('no-retention has no deploy.retention') }),
    );
  });
});
