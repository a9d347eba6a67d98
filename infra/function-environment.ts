/**
 * The environment of a deployed function: what the stack sets itself, plus `functionEnvironment` from
 * the context. At synth the whole of it goes through the functions' own parsers (`loadConfig`, the
 * webhook handler's `httpTimeoutMsFromEnv`), so a value they would refuse at their first invocation
 * fails the synth instead, naming the context key.
 */
import { httpTimeoutMsFromEnv } from '../shared/examples/webhooks/webhook-delivery.js';
import { loadConfig } from '../shared/config/config.js';
import { ConfigError } from '../shared/errors.js';
import { METRICS_NAMESPACE } from '../shared/observability/metrics.js';
import { redactUrl } from '../shared/observability/redact.js';

/** Where the stack-set values come from (tokens in the stack, placeholders at the check). */
type StackValues = {
  readonly workQueue: string;
  readonly parkingQueue: string | undefined;
  readonly virtualHost: string;
  readonly secretArn: string;
  readonly brokerHost: string;
  readonly functionName: string;
};

/** The variables the stack sets, each with where it comes from: `functionEnvironment` may not set them. */
const STACK_VARIABLES: Readonly<Record<string, string>> = {
  WORK_QUEUE: 'the stack sets it from the workQueue context key, which also names the queue of the event source mapping: set -c workQueue=<queue> instead',
  PARKING_QUEUE: 'the stack sets it from the parkingQueue context key: set -c parkingQueue=<queue> instead',
  AMQP_VHOST: 'the stack sets it from the virtualHost context key, which is also the VIRTUAL_HOST of the event source mapping: set -c virtualHost=<vhost> instead',
  AMQP_SECRET_ID: 'the stack sets it to the BrokerSecretArn parameter, the one secret the functions may read',
  AMQP_HOST: 'the stack sets it to the BrokerHost parameter (or the host of the broker it creates)',
  AMQP_TLS: 'the stack sets it to true: Amazon MQ takes AMQP over TLS only (port 5671)',
  AMQP_URL: 'the deployed functions connect with the BrokerSecretArn secret to AMQP_HOST and never read AMQP_URL',
  FUNCTION_NAME: 'the stack sets it to the function name, which the alarms watch',
  POWERTOOLS_SERVICE_NAME: 'the stack sets it to the function name: it is the `service` dimension the alarms watch',
  POWERTOOLS_METRICS_NAMESPACE: `the stack sets it to ${METRICS_NAMESPACE}, the namespace the alarms watch`,
};

/** The variables a context key other than functionEnvironment sets: an error about them names that key. */
const CONTEXT_KEY_OF: Readonly<Record<string, string>> = { WORK_QUEUE: 'workQueue', PARKING_QUEUE: 'parkingQueue', AMQP_VHOST: 'virtualHost' };

/** The whole environment of one function, the stack's variables first, then `extra` (functionEnvironment). */
function functionEnvironment(values: StackValues, extra: Readonly<Record<string, string>>): Record<string, string> {
  return {
    NODE_OPTIONS: '--enable-source-maps',
    WORK_QUEUE: values.workQueue,
    ...(values.parkingQueue === undefined ? {} : { PARKING_QUEUE: values.parkingQueue }),
    AMQP_SECRET_ID: values.secretArn,
    AMQP_HOST: values.brokerHost,
    AMQP_VHOST: values.virtualHost,
    AMQP_TLS: 'true',
    FUNCTION_NAME: values.functionName,
    // The `service` dimension of the metrics (namespace Boomerang) and of the parked alarms.
    POWERTOOLS_SERVICE_NAME: values.functionName,
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    ...extra,
  };
}

/** What the checks after the parse need from the functions' view of their environment. */
type FunctionTimings = { readonly httpTimeoutMs: number; readonly safetyMarginMs: number };

/**
 * Checks `extra` (functionEnvironment) and the queue keys the way the functions will read them. Throws
 * `ConfigError` naming the context key: a variable the stack sets itself, a password in AMQP_URL, or
 * any value the functions' parsers refuse (`MAX_RETRIES=abc`, an `amq.*` queue name...).
 * @example checkFunctionEnvironment({ workQueue: 'orders', parkingQueue: undefined, virtualHost: '/' }, { MAX_RETRIES: '8' })
 */
function checkFunctionEnvironment(queue: Pick<StackValues, 'workQueue' | 'parkingQueue' | 'virtualHost'>, extra: Readonly<Record<string, string>>): FunctionTimings {
  const url = extra.AMQP_URL;
  if (url !== undefined && url.split(',').some((one) => redactUrl(one.trim()) !== one.trim())) {
    throw new ConfigError(
      `functionEnvironment must not hold a password in AMQP_URL (${redactUrl(url)}): it would be readable in the template and the function configuration. ` +
        'Put the credentials in the Secrets Manager secret (BrokerSecretArn) and remove AMQP_URL.',
    );
  }
  const owned = Object.keys(extra).find((name) => Object.hasOwn(STACK_VARIABLES, name));
  if (owned !== undefined) throw new ConfigError(`functionEnvironment must not set ${owned}: ${STACK_VARIABLES[owned]}`);
  // Placeholders for the values only known at deploy; the parsers read them as plain strings.
  const env = functionEnvironment({ ...queue, secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:synth-check', brokerHost: 'broker.synth-check.invalid', functionName: 'synth-check' }, extra);
  try {
    const config = loadConfig(env);
    return { httpTimeoutMs: httpTimeoutMsFromEnv(env), safetyMarginMs: config.safetyMarginMs };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const variable = /^[A-Z][A-Z0-9_]*/.exec(error.message)?.[0] ?? '';
    const key = CONTEXT_KEY_OF[variable] ?? 'functionEnvironment';
    throw new ConfigError(`${key}: ${error.message} (the functions would refuse to start with it)`, { cause: error });
  }
}

export { checkFunctionEnvironment, functionEnvironment, STACK_VARIABLES };
export type { FunctionTimings, StackValues };
