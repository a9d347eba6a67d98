/**
 * The crash-loop scenario's handler for child invocations: SIGKILLs its own process when it is handed
 * the message whose id is FAULT_POISON_ID (as an out-of-memory kill or a Lambda timeout would end it),
 * and records every other message like the flaky recorder (FAULT_FAIL_PERCENT=0: all succeed).
 */
import type { Handler } from '../../../shared/message/message.js';
import { flakyRecorderFromEnv } from '../../helpers/flaky-recorder.js';

const record = flakyRecorderFromEnv();
const poisonId = process.env.FAULT_POISON_ID;

export const handle: Handler = (message, context) => {
  if (message.properties.messageId === poisonId) process.kill(process.pid, 'SIGKILL');
  return record(message, context);
};
