import { describe, expect, it } from 'vitest';
import { applyTopology } from '../../shared/topology/apply.js';
import { topologyDefinitions } from '../../shared/topology/definitions.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import type { TopologyOptions } from '../../shared/topology/types.js';
import { verifyTopology } from '../../shared/topology/verify.js';
import { sleep, uniqueName } from '../helpers/broker.js';
import { BrokerCtl } from '../helpers/broker-ctl.js';
import { topologyOptions, trackPlan, useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();
const brokerCtl = BrokerCtl.forUrl();

/** The bindings rabbitmqctl lists whose source or destination starts with `prefix`, as `source -> destination [key]`. */
async function listBindings(prefix: string): Promise<string[]> {
  const stdout = await brokerCtl.ctl(['--quiet', '--no-table-headers', 'list_bindings', 'source_name', 'destination_name', 'routing_key']);
  return stdout
    .split('\n')
    .map((line) => line.split('\t'))
    .filter(([source, destination]) => source?.startsWith(prefix) || destination?.startsWith(prefix))
    .map(([s, d, k]) => `${s} -> ${d} [${k}]`);
}

describe('topology definitions imported with rabbitmqctl import_definitions (no management plugin)', () => {
  it.each<[TopologyOptions['delayMode'], TopologyOptions['queueType']]>([
    ['tiers', 'quorum'],
    ['exact', 'classic'],
  ])(
    'in %s mode with %s queues, make exactly what `topology apply` makes',
    async (delayMode, queueType) => {
      // Prepare
      const broker = testBroker();
      const prefix = uniqueName('defs');
      const plan = buildTopologyPlan(
        topologyOptions({
          workQueue: `${prefix}.work`,
          parkingQueue: `${prefix}.work.parked`,
          delayMode,
          queueType,
          tierDelaysMs: [200, 1000],
          delayResolutionMs: 250,
          maxDelayMs: 1000,
          exactNamePrefix: `${prefix}.levels`,
        }),
      );
      trackPlan(broker, plan);
      // Act
      await brokerCtl.importDefinitions(JSON.stringify(topologyDefinitions(plan, '/')));
      // Assess: the import runs asynchronously in the broker; wait until everything is there.
      let report = await verifyTopology(broker.connection, plan);
      for (let i = 0; i < 40 && !report.ok; i++) {
        await sleep(50);
        report = await verifyTopology(broker.connection, plan);
      }
      expect(report.items.filter((item) => item.status !== 'ok' && item.status !== 'not-checked')).toEqual([]);
      // Applying on top finds nothing to create and no argument that differs.
      const applied = await applyTopology(broker.connection, plan);
      expect(applied.items.filter((item) => item.status === 'created' || item.status === 'mismatch')).toEqual([]);
      // And the bindings, which AMQP cannot read, are all there.
      const expected = plan.bindings.map((b) => `${b.source} -> ${b.destination} [${b.pattern}]`);
      expect(await listBindings(prefix)).toEqual(expect.arrayContaining(expected));
      // Two rabbitmqctl calls, each a VM that boots: one took up to 17 s on 4.3.6 (5 s on 3.10.8) on a busy 2-core machine.
    },
    90_000,
  );
});
