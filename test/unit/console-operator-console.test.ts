import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { createOperatorConsoleFunction } from '../../shared/console/operator-console.js';

/** Refused before it connects: this broker is never reached. */
const ENV = { AMQP_URL: 'amqp://guest:guest@127.0.0.1:1', WORK_QUEUE: 'orders' };
const handler = createOperatorConsoleFunction([{ name: 'orders', loadConfig: (env) => loadConfig(env) }], { env: ENV });

describe('createOperatorConsoleFunction', () => {
  it("reports the depths of its construct's queues only, naming the stray one and those it serves", async () => {
    await expect(handler({ op: 'depths', queues: ['orders', 'orders.parked', 'payroll'] })).rejects.toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        message: expect.stringMatching(/"payroll": .*queues only \(orders, orders\.delay\.1000ms, .*orders\.parked\)/),
      }),
    );
  });

  it('counts apart only the work queues of its native queues, naming those it serves', async () => {
    await expect(handler({ op: 'depths', queues: [], native: ['orders'] })).rejects.toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        message: expect.stringContaining('"orders": the operator function counts apart its construct\'s native work queues only (none)'),
      }),
    );
  });

  it('answers no counts apart when none is asked, as before them', async () => {
    await expect(handler({ op: 'depths', queues: [] })).resolves.toEqual({ depths: [] });
  });

  it('runs console commands on its parking lots only', async () => {
    await expect(handler({ op: 'console', parkingQueue: 'orders', command: { kind: 'purge', filter: { 'message-id': 'm-1' }, limit: 1 } })).rejects.toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        message: expect.stringContaining('--parking-queue orders: the operator function serves the parking lots orders.parked (orders) only'),
      }),
    );
  });
});
