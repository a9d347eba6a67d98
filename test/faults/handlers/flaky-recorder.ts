/** The fault scenarios' handler for child invocations (`invoke pull --handler <this file>`); see createFlakyRecorder. */
import { flakyRecorderFromEnv } from '../../helpers/flaky-recorder.js';

export const handle = flakyRecorderFromEnv();
