/**
 * The bad-input scenario's handler, as a team would write one: it parses the body with
 * `message.json()` (which throws UnrecoverableError on an empty or non-JSON body), fails the first
 * `failTimes` attempts on purpose, and appends every attempt to FAULT_RECORD_FILE as
 * `F|S <id> <retryNo> <copyId> <bodyBytes>`. A body of JSON `null` makes it throw a TypeError,
 * the kind of bug a real handler has.
 */
import { appendFileSync } from 'node:fs';
import type { Handler } from '../../../shared/message/message.js';
import { messageKey } from '../../helpers/flaky-recorder.js';

const recordFile = process.env.FAULT_RECORD_FILE ?? '';
if (recordFile === '') throw new Error('FAULT_RECORD_FILE must name the file that records every attempt');

export const handle: Handler = (message) => {
  const id = messageKey(message.properties.messageId, message.body);
  const copy = message.headers['boomerang-copy-id'];
  const line = `${id} ${message.retryNo} ${typeof copy === 'string' ? copy : '-'} ${message.body.length}`;
  const body = message.json<{ failTimes?: number } | null>();
  const failTimes = (body as { failTimes?: number }).failTimes ?? 0;
  if (message.retryNo < failTimes) {
    appendFileSync(recordFile, `F ${line}\n`);
    throw new Error(`fails ${failTimes} time(s) on purpose`);
  }
  appendFileSync(recordFile, `S ${line}\n`);
};
