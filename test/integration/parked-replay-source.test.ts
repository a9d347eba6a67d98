import type { GetMessage } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { type TestBroker, uniqueName } from '../helpers/broker.js';
import { runParkedCli } from '../helpers/parked-cli.js';
import { useTestBroker } from '../helpers/topology.js';

const broker = useTestBroker();

/**
 * A work queue whose rejects the broker dead-letters into its parking lot, and a queue someone
 * would like to reach with the operator's credentials. In the lot: a genuine park (a copy as the
 * function publishes it, naming its work queue) and a forged one (a producer set
 * boomerang-source-queue to the victim, and got it rejected from the work queue).
 */
async function lotWithAForgedSource(b: TestBroker): Promise<{ work: string; parked: string; victim: string }> {
  const work = uniqueName('work');
  const parked = `${work}.parked`;
  const victim = uniqueName('victim');
  b.trackQueue(work, parked, victim);
  await b.channel.assertQueue(parked, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await b.channel.assertQueue(victim, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await b.channel.assertQueue(work, {
    durable: true,
    arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': parked },
  });
  b.channel.sendToQueue(parked, Buffer.from('{}'), {
    persistent: true,
    messageId: 'genuine',
    headers: { [BoomerangHeader.sourceQueue]: work, [BoomerangHeader.errorName]: 'PartnerDown' },
  });
  b.channel.sendToQueue(work, Buffer.from('{}'), { persistent: true, messageId: 'forged', headers: { [BoomerangHeader.sourceQueue]: victim } });
  await b.holds(work, 1);
  b.channel.nack((await b.channel.get(work)) as GetMessage, false, false);
  await b.holds(parked, 2);
  return { work, parked, victim };
}

describe('replay and the boomerang-source-queue header', () => {
  it('does not follow a forged header: that message stays parked and is named; a genuine park goes back to its work queue', async () => {
    // Prepare
    const b = broker();
    const { work, parked, victim } = await lotWithAForgedSource(b);
    // Act
    const run = await runParkedCli(['replay'], work);
    // Assess
    expect(await b.messageCount(victim)).toBe(0);
    expect((await b.drain(work, 1)).map((m) => m.properties.messageId)).toEqual(['genuine']);
    expect((await b.drain(parked, 1)).map((m) => m.properties.messageId)).toEqual(['forged']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`will replay 1 to ${work}`);
    expect(run.stdout.indexOf(`will replay 1 to ${work}`)).toBeLessThan(run.stdout.indexOf(`replayed 1 to ${work}`));
    expect(run.stderr).toContain(`"forged" stayed parked: its boomerang-source-queue header names ${victim}`);
  });
});
