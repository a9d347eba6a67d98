import { nativeBrokerRefusal } from '../../shared/topology/native-broker.js';
import { brokerVersion } from './broker.js';

/**
 * The version of the broker under test, asked when a test file loads: CI runs the same files on
 * RabbitMQ 3.10 and on 4.3, and some behaviour exists on one only.
 */
const BROKER_VERSION: string = await brokerVersion();

/** Whether the broker under test can delay a message natively (`delayMode: 'native'`, RabbitMQ 4.3+). */
const NATIVE_BROKER: boolean = nativeBrokerRefusal(BROKER_VERSION) === undefined;

export { BROKER_VERSION, NATIVE_BROKER };
