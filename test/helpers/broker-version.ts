import amqp from 'amqplib';
import { nativeBrokerRefusal } from '../../shared/topology/native-broker.js';
import { AMQP_URL } from './broker.js';

/**
 * The version of the broker under test, asked over AMQP 0-9-1 (which every version speaks) when a
 * test file loads: CI runs the same files on RabbitMQ 3.10 and on 4.3, and some behaviour exists on one only.
 */
const BROKER_VERSION: string = await (async () => {
  const probe = await amqp.connect(AMQP_URL);
  try {
    return String(probe.connection.serverProperties.version);
  } finally {
    await probe.close();
  }
})();

/** Whether the broker under test can delay a message natively (`delayMode: 'native'`, RabbitMQ 4.3+). */
const NATIVE_BROKER: boolean = nativeBrokerRefusal(BROKER_VERSION) === undefined;

export { BROKER_VERSION, NATIVE_BROKER };
