/** amqplib's connection as the copy path loads it: the way native/amqp091-late.ts takes outside a native bundle. */
import { connectFromConfig } from '../amqp/connect-from-config.js';

function connectFromConfigNow(): Promise<typeof connectFromConfig> {
  return Promise.resolve(connectFromConfig);
}

export { connectFromConfigNow };
