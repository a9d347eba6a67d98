/**
 * What `verify` and `apply` say about an existing `native` work queue: its EFFECTIVE settings (its
 * arguments, and its policy when one can be read) against the plan, every difference named, and the
 * policy that mends them when a policy can. Pure.
 *
 * How a policy and an argument combine on RabbitMQ 4.3.6 (measured, one key against the other):
 * - `delayed-retry-type`: the policy wins (a policy's `failed` turned on an argument's `disabled`, and back);
 * - `delayed-retry-min`, `-max`, `delivery-limit`: the lower wins (arguments 1000/3000 with a policy's
 *   200/400 paced 200 and 400 ms, and so did the reverse; a limit of 5 with a policy's 1 allowed one return);
 * - `dead-letter-routing-key` (and, as RabbitMQ documents, the other dead-letter keys and `overflow`):
 *   the argument wins;
 * - `x-queue-type`: an argument only.
 */
import { nativePolicy } from './policy-fix.js';
import { ONE_POLICY, POLICIES_UNREADABLE, type QueueCheck } from './queue-checks.js';
import type { ArgumentDifference, ArgumentTable, QueuePolicy, QueueSpec } from './types.js';

/** How a key's argument and its policy value make the effective value. */
type Precedence = 'argument-only' | 'policy' | 'lower' | 'argument';

const PRECEDENCE: Readonly<Record<string, Precedence>> = {
  'x-queue-type': 'argument-only',
  'x-delayed-retry-type': 'policy',
  'x-delayed-retry-min': 'lower',
  'x-delayed-retry-max': 'lower',
  'x-delivery-limit': 'lower',
};

type Value = string | number | boolean | undefined;

function precedenceOf(argument: string): Precedence {
  return PRECEDENCE[argument] ?? 'argument';
}

/** The lower of two numbers; for the delivery limit a negative value means none, so any limit wins over it. */
function lower(argument: string, a: Value, b: Value): Value {
  if (a === undefined || b === undefined) return a ?? b;
  const [x, y] = [Number(a), Number(b)];
  if (argument === 'x-delivery-limit' && (x < 0 || y < 0)) return x < 0 ? b : a;
  return x <= y ? a : b;
}

function effective(argument: string, fromArgument: Value, fromPolicy: Value): Value {
  switch (precedenceOf(argument)) {
    case 'argument-only':
      return fromArgument;
    case 'policy':
      return fromPolicy ?? fromArgument;
    case 'lower':
      return lower(argument, fromArgument, fromPolicy);
    default:
      return fromArgument ?? fromPolicy;
  }
}

/**
 * Whether a policy with the planned value would mend the queue for good. Only the pacing and the
 * limit (`lower` keys) qualify: the pull function checks the retry type and the dead-lettering in the
 * queue's own arguments at its first invocation (native/native-topology-check.ts), since AMQP cannot
 * read policies and a park without them would be dropped; a queue that has them only from a policy
 * is refused there.
 */
function policyCanSet(argument: string, planned: Value, fromArgument: Value): boolean {
  return precedenceOf(argument) === 'lower' && effective(argument, fromArgument, planned) === planned;
}

function policyValue(policy: QueuePolicy | undefined, argument: string): Value {
  const value = policy?.definition[argument.replace(/^x-/, '')];
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}

/** The planned arguments as policy keys (without `x-`), the queue type left out: a policy cannot set it. */
function policyDefinition(spec: QueueSpec): Record<string, string | number> {
  return Object.fromEntries(
    Object.entries(spec.arguments)
      .filter(([key]) => precedenceOf(key) !== 'argument-only')
      .map(([key, value]) => [key.replace(/^x-/, ''), value]),
  );
}

function shown(value: Value): string | undefined {
  return value === undefined ? undefined : String(value);
}

/**
 * The check of an existing native work queue. `current`: its arguments as read over AMQP
 * (`undefined` when they could not all be read, `incomplete` saying why, `readDifferences` what was
 * found before); `policy`: its effective policy, or `undefined` when it could not be read.
 * @example
 * nativeWorkQueueCheck(spec, { 'x-queue-type': 'quorum' }, { name: 'boomerang-native-orders', definition: policyDefinition(spec) })
 * // { differences: [], detail: 'native settings in order (from its arguments and policy boomerang-native-orders)' }
 */
function nativeWorkQueueCheck(
  spec: QueueSpec,
  current: ArgumentTable | undefined,
  policy: QueuePolicy | undefined,
  reading: { readonly incomplete?: string; readonly readDifferences?: readonly ArgumentDifference[] } = {},
): QueueCheck & { readonly differences: readonly ArgumentDifference[] } {
  if (current === undefined) {
    return {
      differences: reading.readDifferences ?? [],
      detail: `native settings not known: its arguments could not all be read (${reading.incomplete ?? 'unknown'})`,
    };
  }
  const source =
    policy === undefined
      ? `its arguments; its policy was not read (${POLICIES_UNREADABLE}, or pass --rabbitmqctl)`
      : policy.name === ''
        ? 'its arguments; no policy applies'
        : `its arguments and policy ${policy.name}`;
  const differences: ArgumentDifference[] = [];
  let fixable = true;
  for (const [argument, planned] of Object.entries(spec.arguments)) {
    const actual = effective(argument, current[argument], policyValue(policy, argument));
    if (shown(actual) === shown(planned)) continue;
    differences.push({ kind: 'queue', name: spec.name, argument, expected: shown(planned), actual: shown(actual) });
    fixable &&= policyCanSet(argument, planned, current[argument]);
  }
  if (differences.length === 0) return { differences, detail: `native settings in order (from ${source})` };
  const detail = `native settings differ (from ${source})`;
  const lacks = `work queue '${spec.name}' lacks what delayMode 'native' needs (${differences.map((d) => d.argument).join(', ')}), and apply cannot change an existing queue's arguments.`;
  if (!fixable) {
    const message = `${lacks} The pull function needs them among the queue's own arguments (it checks them at its first invocation, and cannot see a policy), so a policy cannot mend it: move its messages elsewhere (e.g. a shovel), delete it and run \`boomerang topology apply\`, which declares it with them.`;
    return { differences, detail, warning: { queue: spec.name, message } };
  }
  const message =
    `${lacks} This policy supplies them (the lower delayed-retry-min, -max and delivery-limit wins). ` +
    `${ONE_POLICY} Then check with \`boomerang topology verify --rabbitmqctl rabbitmqctl\`: AMQP cannot read policies.`;
  return { differences, detail, warning: { queue: spec.name, message, fix: nativePolicy(spec.name, policyDefinition(spec)) } };
}

export { nativeWorkQueueCheck, policyDefinition };
