import { nackCounts, parseBrokerVersion } from '../../shared/core/mode-settings.js';
import { nativeBrokerRefusal } from '../../shared/topology/native-broker.js';
import { brokerVersion } from './broker.js';

/**
 * The version of the broker under test, asked when a test file loads: CI runs the same files on
 * RabbitMQ 3.10, 4.0 and 4.3, and some behaviour exists on some of them only.
 */
const BROKER_VERSION: string = await brokerVersion();

/** Whether the broker under test can delay a message natively (`delayMode: 'native'`, RabbitMQ 4.3+). */
const NATIVE_BROKER: boolean = nativeBrokerRefusal(BROKER_VERSION) === undefined;

/**
 * Whether a requeueing nack raises a quorum message's `x-delivery-count` (3.x, 4.0-4.2), so that it
 * counts toward the queue's delivery limit (4.0's default is 20), or only its `x-acquired-count` (4.3+).
 */
const GIVE_BACK_COUNTS: boolean = nackCounts(parseBrokerVersion(BROKER_VERSION));

/** The header in which a quorum queue counts the reads of `boomerang parked` (each a requeueing nack). */
const READ_COUNT_HEADER: 'x-delivery-count' | 'x-acquired-count' = GIVE_BACK_COUNTS ? 'x-delivery-count' : 'x-acquired-count';

export { BROKER_VERSION, GIVE_BACK_COUNTS, NATIVE_BROKER, READ_COUNT_HEADER };
