/**
 * Reads every argument in which an existing entity differs from a declaration, over AMQP 0.9.1 only.
 * The broker answers a redeclare with a 406 naming the FIRST differing argument and its current
 * value; declaring again with that value adopted (an existing entity is never changed by a declare)
 * makes it name the next one, until the declaration matches. The matching declaration is then the
 * entity's arguments, as far as the broker compares them (checked on RabbitMQ 3.10.8 and 4.3.6).
 * Policies are not arguments: AMQP cannot read them, and nothing here claims to.
 */
import { type ChannelLender, declare, type PlannedEntity } from './broker-ops.js';
import type { ArgumentDifference, ArgumentTable, ArgumentValue } from './types.js';

type ArgumentReading = {
  /** Every difference found, in the broker's order; empty when the entity matches the declaration. */
  readonly differences: readonly ArgumentDifference[];
  /** The entity's arguments, when every difference could be followed; otherwise `undefined`. */
  readonly current: ArgumentTable | undefined;
  /** Why the reading stopped early: a difference in a flag (durable) or a value of a type it cannot send back. */
  readonly incomplete?: string;
};

const NUMERIC_TYPES = new Set(['byte', 'short', 'signedint', 'long', 'unsignedbyte', 'unsignedshort', 'unsignedint', 'float', 'double']);
const STRING_TYPES = new Set(['longstr', 'shortstr']);

/**
 * The value the entity holds, typed as the broker will compare it: from the type the broker names,
 * else from the type of the value declared. `undefined` when it cannot be sent back as is.
 */
function adoptedValue(difference: ArgumentDifference, declared: ArgumentValue | undefined): ArgumentValue | undefined {
  const { actual, actualType } = difference;
  if (actual === undefined) return undefined;
  const type = actualType ?? (typeof declared === 'number' ? 'long' : typeof declared === 'boolean' ? 'bool' : 'longstr');
  if (STRING_TYPES.has(type)) return actual;
  if (type === 'bool' && (actual === 'true' || actual === 'false')) return actual === 'true';
  const number = Number(actual);
  return NUMERIC_TYPES.has(type) && actual.trim() !== '' && Number.isFinite(number) ? number : undefined;
}

/**
 * Declares `entity` with its planned arguments (creating it when missing) and follows every 406 to the
 * end; see the module comment. Other broker failures are thrown.
 */
async function readArguments(lender: ChannelLender, entity: PlannedEntity): Promise<ArgumentReading> {
  const args: Record<string, ArgumentValue> = { ...entity.spec.arguments };
  const differences: ArgumentDifference[] = [];
  for (;;) {
    const comparison = await declare(lender, entity, args);
    if (comparison.equal) return { differences, current: args };
    const { difference } = comparison;
    differences.push(difference);
    const { argument } = difference;
    // `durable` and the other flags are not arguments; a repeat would loop forever.
    const followable = argument.startsWith('x-') || argument === 'alternate-exchange';
    const repeated = differences.filter((d) => d.argument === argument).length > 1;
    const value = adoptedValue(difference, args[argument]);
    if (!followable || repeated || (value === undefined && difference.actual !== undefined)) {
      return { differences, current: undefined, incomplete: `cannot read past ${argument} = ${difference.actual ?? '(not set)'}` };
    }
    if (value === undefined) delete args[argument];
    else args[argument] = value;
  }
}

export { adoptedValue, readArguments };
