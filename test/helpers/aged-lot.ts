import { BoomerangHeader } from '../../shared/message/headers.js';
import { type TestBroker, uniqueName } from './broker.js';

const DAY_MS = 86_400_000;

/**
 * A work queue and its parking lot (quorum) holding six parked messages in order: m-i parked
 * `i * daysApart` days (and a minute) ago; even ones PartnerDown, odd ones Invalid.
 */
async function agedLot(b: TestBroker, daysApart = 1): Promise<{ work: string; parked: string }> {
  const work = uniqueName('retention');
  const parked = `${work}.parked`;
  b.trackQueue(work, parked);
  const channel = await b.connection.createConfirmChannel();
  for (const queue of [work, parked]) await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  for (let i = 0; i < 6; i++) {
    channel.sendToQueue(parked, Buffer.from(`{"n":${i}}`), {
      persistent: true,
      messageId: `m-${i}`,
      headers: {
        [BoomerangHeader.errorName]: i % 2 === 0 ? 'PartnerDown' : 'Invalid',
        [BoomerangHeader.errorMessage]: i % 2 === 0 ? `HTTP 50${i}` : `field ${i} missing`,
        [BoomerangHeader.parkedAt]: new Date(Date.now() - i * daysApart * DAY_MS - 60_000).toISOString(),
        [BoomerangHeader.sourceQueue]: work,
      },
    });
  }
  await channel.waitForConfirms();
  await channel.close();
  return { work, parked };
}

export { agedLot };
