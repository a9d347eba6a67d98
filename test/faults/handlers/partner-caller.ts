/**
 * The pace scenario's handler for child invocations (`invoke pull --handler <this file>`): one request
 * to the local partner (PARTNER_URL) per message, then, once it answered, the attempt's line in
 * FAULT_RECORD_FILE (`S <id> <retryNo> <copyId> <pid> <epochMs> -`, as the flaky recorder writes it).
 */
import { appendFileSync } from 'node:fs';
import type { Handler } from '../../../shared/message/message.js';
import { messageKey } from '../../helpers/flaky-recorder.js';

const partner = process.env.PARTNER_URL ?? '';
const recordFile = process.env.FAULT_RECORD_FILE ?? '';
if (partner === '' || recordFile === '') throw new Error('PARTNER_URL and FAULT_RECORD_FILE must be set');

export const handle: Handler = async (message, { signal }) => {
  // When the rate limit let it start: what the limit promises, before the machine's load delays the send.
  const startedAt = performance.timeOrigin + performance.now();
  const id = messageKey(message.properties.messageId, message.body);
  const response = await fetch(`${partner}/calls`, {
    method: 'POST',
    headers: { 'x-message-id': id, 'x-sender': String(process.pid), 'x-started-at': startedAt.toFixed(3) },
    body: message.body,
    signal,
  });
  if (!response.ok) throw new Error(`the partner answered ${response.status}`);
  const copy = message.headers['boomerang-copy-id'];
  appendFileSync(recordFile, `S ${id} ${message.retryNo} ${typeof copy === 'string' ? copy : '-'} ${process.pid} ${Date.now()} -\n`);
};
