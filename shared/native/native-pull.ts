/**
 * The native mode (`delayMode: 'native'`, RabbitMQ 4.3+): the work queue over AMQP 1.0, taken with
 * up to BATCH_SIZE unsettled deliveries at a time, each verdict settled with one AMQP 1.0 outcome that
 * the broker carries out (native-annotations.ts): it delays, dead-letters or drops the message as
 * told, and nothing is published. What is not settled when the link closes goes back to the queue.
 * This file opens it (connect, refuse an older broker, check, read the pause marker); the transport
 * is native-transport.ts, the invocation around it core/invocation.ts.
 */
import type { Config } from '../config/config.js';
import { type InvocationOptions, runInvocation } from '../core/invocation.js';
import type { OpenTransport } from '../core/transport.js';
import { readPause } from '../core/pause.js';
import { type BrokerConnectionError, isNamedError } from '../errors.js';
import type { Summary } from '../observability/summary.js';
import { brokerVersionOf } from '../topology/broker-ops.js';
import { nativeBrokerRefusal } from '../topology/native-broker.js';
import { connectFromConfigLate } from './amqp091-late.js';
import { connectAmqp10FromConfig } from './amqp10-from-config.js';
import { amqp10PauseMarker } from './amqp10-pause-marker.js';
import { openNativeManagement } from './native-management.js';
import { NativeReceiver } from './native-receiver.js';
import { NativeTransport } from './native-transport.js';

/**
 * One invocation of the pull function on a native queue: connect over AMQP 1.0, refuse a broker
 * older than 4.3 before anything is taken, then take and settle (core/invocation.ts). With
 * `checkTopology` (the default; the pull function asks for it at a container's first invocation) the
 * work queue and the parking lot are checked before the receiver is given credit (native-topology-check.ts).
 * The queue's pause marker is read before the receiver is given credit: a paused queue takes nothing.
 * @example const summary = await runNativePull({ config, handler, budgetMs, log }, { checkTopology: true });
 */
function runNativePull(options: InvocationOptions, checks: { readonly checkTopology?: boolean } = {}): Promise<Summary> {
  return runInvocation(openNative(options, checks.checkTopology ?? true), options);
}

function openNative(options: InvocationOptions, checkTopology: boolean): OpenTransport {
  return async ({ tally }) => {
    const { config, log } = options;
    const broker = await connectAmqp10FromConfig(config, { connectionName: config.functionName, log }).catch((error: unknown) =>
      refuseOlderBroker(config, error),
    );
    try {
      const refusal = nativeBrokerRefusal(broker.brokerVersion);
      if (refusal !== undefined) throw refusal;
      // Side by side, as each takes a round trip: the receiver attaches without credit while the
      // management API attaches, checks the topology and reads the pause marker; credit is granted only
      // when the check passed and the queue is not paused, so nothing is taken before.
      const attaching = NativeReceiver.attach(broker.connection, config.workQueue, config.batchSize);
      attaching.catch(() => undefined);
      const management = openNativeManagement(broker.connection, { config, log, checkTopology });
      const markerOf = (queue: string) => amqp10PauseMarker(broker.connection, management.api, queue);
      // With a check, a management API that cannot attach fails the check: no pause read to warn about.
      const pausing = checkTopology
        ? management.api().then((api) => (api === undefined ? undefined : readPause(markerOf(config.workQueue), log)))
        : readPause(markerOf(config.workQueue), log);
      // The check's error first: it names what is missing and what to run. Closing the connection
      // (below) detaches the receiver, which has no credit and so took nothing.
      await management.checked;
      const pausedUntil = await pausing;
      // An earlier invocation heard the partner say "slow down": take nothing until the pause is over.
      if (pausedUntil !== undefined) {
        await broker.close();
        return { transport: undefined, pausedUntil };
      }
      const receiver = await attaching;
      receiver.start();
      return { transport: new NativeTransport(options, broker, receiver, management, tally), markerOf };
    } catch (error) {
      await broker.close();
      throw error;
    }
  };
}

/**
 * A broker that would not speak AMQP 1.0 may simply be too old (3.x has it only as a plugin, and no
 * delayed retry): asked over 0-9-1, it names its version, and the refusal says what works there.
 * Anything else fails with the AMQP 1.0 connection's own error, at once: a timeout, a refused login or
 * a certificate would only fail (or wait) again over 0-9-1.
 */
async function refuseOlderBroker(config: Config, error: unknown): Promise<never> {
  if (!isNamedError<BrokerConnectionError>(error, 'BrokerConnectionError') || error.reason !== 'unreachable') throw error;
  const connectFromConfig = await connectFromConfigLate();
  const broker = await connectFromConfig(config, { connectionName: config.functionName }).catch(() => undefined);
  if (broker !== undefined) {
    const refusal = nativeBrokerRefusal(brokerVersionOf(broker.connection));
    await broker.close();
    if (refusal !== undefined) throw refusal;
  }
  throw error;
}

export { openNative, runNativePull };
