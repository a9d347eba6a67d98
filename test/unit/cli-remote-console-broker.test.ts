import { describe, expect, it } from 'vitest';
import { remoteConsoleBroker } from '../../shared/cli/remote-console-broker.js';
import { OutputWindow } from '../../shared/parked/output-window.js';
import type { WalkCounts } from '../../shared/parked/walk.js';

const LOT = { parkingQueue: 'orders.parked', workQueue: 'orders' };
const COUNTS = { total: 5, visited: 1, kept: 0, moved: 0, deleted: 1, notMoved: 0 };

/** A fake function that records each request and answers with `answer(request)`. */
function fake(answer: (request: Record<string, unknown>) => unknown): { invoke: (request: unknown) => Promise<unknown>; requests: Record<string, unknown>[] } {
  const requests: Record<string, unknown>[] = [];
  return {
    requests,
    invoke: async (request) => {
      requests.push(request as Record<string, unknown>);
      return answer(request as Record<string, unknown>);
    },
  };
}

describe('remoteConsoleBroker', () => {
  it("joins a read from pages, passing the first page's read counts back for the others", async () => {
    // Prepare
    const result = { ...COUNTS, ending: 'done', message: { headers: { 'x-delivery-count': 1 }, body: { text: 'é'.repeat(40) } } };
    const { invoke, requests } = fake((request) => {
      const page = request.page as { offset: number; bytes: number };
      const window = new OutputWindow(page.offset, page.bytes);
      window.write(JSON.stringify(result));
      return { page: window.page(), readCounts: { 'x-delivery-count': requests.length } };
    });
    // Act
    const read = await remoteConsoleBroker(invoke, { name: 'orders-operator', pageBytes: 16 }).walk(LOT, { kind: 'message', pick: { messageId: 'm-1' } });
    // Assess
    expect(read).toEqual(result);
    expect(requests.length).toBe(Math.ceil(Buffer.byteLength(JSON.stringify(result)) / 16));
    expect(requests.slice(1).every((r) => JSON.stringify(r.readCounts) === '{"x-delivery-count":1}')).toBe(true);
    expect(requests[0]).toMatchObject({ op: 'console', parkingQueue: 'orders.parked', command: { kind: 'message' } });
  });

  it('refuses a read whose pages are of two outputs (the lot changed), naming the function', async () => {
    // Prepare
    const { invoke } = fake((request) => {
      const page = request.page as { offset: number; bytes: number };
      const window = new OutputWindow(page.offset, page.bytes);
      window.write(JSON.stringify({ n: page.offset, pad: 'x'.repeat(40) }));
      return { page: window.page(), readCounts: {} };
    });
    // Act
    const read = remoteConsoleBroker(invoke, { name: 'orders-operator', pageBytes: 16 }).walk(LOT, { kind: 'groups', nowMs: 1 });
    // Assess
    await expect(read).rejects.toThrow(
      expect.objectContaining({
        name: 'OperatorFunctionError',
        message: expect.stringContaining('groups through orders-operator: the output changed between two pages'),
      }),
    );
  });

  it('purges in slices, each taking what is left of the confirmed count, its counts reported after each', async () => {
    // Prepare
    const { invoke, requests } = fake(() => ({
      result: { ...COUNTS, total: 5 - requests.length + 1, selected: 1, deleted: 1, ending: requests.length < 3 ? 'early' : 'done' },
      more: requests.length < 3,
    }));
    const reported: WalkCounts[] = [];
    // Act
    const result = await remoteConsoleBroker(invoke, { name: 'orders-operator', sliceMs: 7 }).walk(
      LOT,
      { kind: 'purge', filter: { error: ['A'] }, limit: 3 },
      (c) => reported.push({ ...c }),
    );
    // Assess
    expect(requests.map((r) => (r.command as { limit: number }).limit)).toEqual([3, 2, 1]);
    expect(requests.every((r) => r.sliceMs === 7)).toBe(true);
    expect(reported.map((c) => [c.total, c.visited, c.deleted])).toEqual([
      [5, 1, 1],
      [5, 2, 2],
      [5, 3, 3],
    ]);
    expect(result).toEqual({ total: 5, visited: 3, kept: 0, moved: 0, deleted: 3, notMoved: 0, selected: 3, ending: 'done' });
  });

  it("passes a replay's tally on to its next slice and answers depths as a map", async () => {
    // Prepare
    const { invoke, requests } = fake((request) =>
      request.op === 'depths'
        ? {
            depths: [
              ['orders', 2],
              ['orders.parked', null],
            ],
          }
        : { result: { ...COUNTS, selected: requests.length }, more: requests.length < 2, tally: { selected: requests.length } },
    );
    const broker = remoteConsoleBroker(invoke, { name: 'orders-operator' });
    // Act
    await broker.walk(LOT, { kind: 'replay', filter: {}, limit: 2, ratePerSecond: 50 });
    const depths = await broker.depths(['orders', 'orders.parked']);
    // Assess
    expect(requests.slice(0, 2).map((r) => r.tally)).toEqual([undefined, { selected: 1 }]);
    expect(depths).toEqual(
      new Map([
        ['orders', 2],
        ['orders.parked', null],
      ]),
    );
    expect(broker.endpoint).toBe('the broker behind the operator function orders-operator');
  });

  it("asks a native work queue's counts apart in an invocation of their own, and says so when the function predates them", async () => {
    // Prepare
    const counted = { kind: 'counted', ready: 2, delayed: 4, unacked: 1, nextDueAtMs: null } as const;
    const current = fake(() => ({ depths: [], native: [['orders', counted]] }));
    const older = fake(() => ({ depths: [] }));
    // Act
    const counts = await remoteConsoleBroker(current.invoke, { name: 'orders-operator' }).nativeCounts(['orders']);
    const unknown = await remoteConsoleBroker(older.invoke, { name: 'orders-operator' }).nativeCounts(['orders']);
    // Assess
    expect(current.requests).toEqual([{ op: 'depths', queues: [], native: ['orders'] }]);
    expect(counts).toEqual(new Map([['orders', counted]]));
    expect(unknown.get('orders')).toEqual({ kind: 'unknown', reason: expect.stringContaining('operator function orders-operator does not count them') });
  });
});
