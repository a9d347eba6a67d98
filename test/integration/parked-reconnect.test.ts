import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { resumableReplay } from '../../shared/parked/replay.js';
import { withParkingLot } from '../../shared/parked/session.js';
import { EVERYTHING } from '../../shared/parked/filters.js';
import { TestBroker, uniqueName } from '../helpers/broker.js';
import { BrokerCtl } from '../helpers/broker-ctl.js';
import { testConfig } from '../helpers/engine.js';

const PARKED = 300;
const CTL_TIMEOUT_MS = 120_000;

/** Closes, on the broker, the connections whose client named itself `connectionName`; resolves with how many. */
async function closeConnectionsNamed(ctl: BrokerCtl, connectionName: string): Promise<number> {
  // The table form gives the pid as close_connection takes it (the JSON form drops the node name).
  const listed = await ctl.ctl(['list_connections', 'pid', 'client_properties', '--quiet', '--no-table-headers']);
  const mine = listed
    .split('\n')
    .filter((line) => line.includes(`"${connectionName}"`))
    .map((line) => line.split('\t')[0] as string);
  for (const pid of mine) await ctl.ctl(['close_connection', pid, 'test: cut the parked tool off']);
  return mine.length;
}

describe('parked replay through a lost connection (amqp-connection-manager)', { timeout: CTL_TIMEOUT_MS }, () => {
  let broker: TestBroker;

  beforeEach(async () => {
    broker = await TestBroker.open();
  });

  afterEach(async () => {
    await broker.close();
  });

  it('reconnects and carries on: every parked message ends up replayed, none lost (duplicates counted)', async () => {
    // Prepare: PARKED parked copies whose source queue is `source`
    const source = uniqueName('reconnect-work');
    const parked = `${source}.parked`;
    broker.trackQueue(source, parked);
    for (const queue of [source, parked]) await broker.channel.assertQueue(queue, { durable: true });
    for (let i = 0; i < PARKED; i++) {
      broker.channel.sendToQueue(parked, Buffer.from(`{"n":${i}}`), {
        persistent: true,
        messageId: `m-${i}`,
        headers: { [BoomerangHeader.sourceQueue]: source },
      });
    }
    await broker.holds(parked, PARKED);
    const connectionName = uniqueName('test-parked-reconnect');
    const config = testConfig({ PARKING_QUEUE: parked });
    // 15 a second: 20 s in all, so that the cut (rabbitmqctl starts a VM: seconds on a loaded machine,
    // more through 4.3's chroot) comes well before the end; at 40 a second a loaded CI run cut nothing.
    const replaying = resumableReplay({
      filter: EVERYTHING,
      workQueue: source,
      keepCount: false,
      dryRun: false,
      retryHeader: config.retryHeader,
      ratePerSecond: 15,
    });

    // Act: cut the tool's connection once a quarter of the lot is back
    const done = withParkingLot(config, parked, replaying, { resume: true, connectionName });
    await broker.holds(source, PARKED / 4, 60_000);
    const closed = await closeConnectionsNamed(BrokerCtl.forUrl(), connectionName);
    const result = await done;

    // Assess
    expect(closed).toBe(1);
    // The walk that finished started after the cut, on what the cut one left parked.
    expect(result.total).toBeLessThan(PARKED);
    const back = await broker.drain(source, PARKED, 10_000);
    // A duplicate comes on top of the PARKED: take whatever else is there.
    for (let extra = await broker.channel.get(source, { noAck: true }); extra !== false; extra = await broker.channel.get(source, { noAck: true }))
      back.push(extra);
    const ids = back.map((m) => String(m.properties.messageId));
    const duplicates = ids.length - new Set(ids).size;
    console.log(
      `[reconnect] replayed ${ids.length} copies of ${PARKED} parked messages (${duplicates} duplicates); result.selected ${result.selected}, last walk ${JSON.stringify({ total: result.total, moved: result.moved })}`,
    );
    expect(new Set(ids).size).toBe(PARKED);
    expect(duplicates).toBeLessThanOrEqual(1);
    expect(await broker.messageCount(parked)).toBe(0);
  });
});
