/**
 * Turns the broker's 406 PRECONDITION_FAILED text into data and into an error a person can act on.
 * The broker reports only the first differing argument of an entity. Texts seen on RabbitMQ 3.10:
 *   inequivalent arg 'x-message-ttl' for queue 'a' in vhost '/': received '2000' but current is '1000'
 *   ... received none but current is the value '1000' of type 'short'
 *   ... received the value 'zz' of type 'longstr' but current is none
 * and on other versions: received the value '2000' of type 'signedint' but current value is '1000' of type 'long'.
 */
import { TopologyMismatchError } from '../errors.js';

/** One argument that differs between the plan and an existing entity (`undefined` = not set). */
type ArgumentDifference = {
  readonly kind: 'queue' | 'exchange';
  readonly name: string;
  readonly argument: string;
  /** What the plan declares (the broker's "received"). */
  readonly expected: string | undefined;
  /** What the existing entity has (the broker's "current"). */
  readonly actual: string | undefined;
};

const INEQUIVALENT = new RegExp(
  "inequivalent arg '([^']+)' for (queue|exchange) '(.*)' in vhost '.*': " +
    'received (.+?) but current (?:value )?is (.+?)"?$',
  's',
);
const VALUE = /^(?:the value )?'(.*?)'(?: of type '[\w-]+')?$/s;

/** Reads `none`, `'1000'`, `the value '1000' of type 'long'` or `'1000' of type 'long'`. */
function parseValue(text: string): string | undefined {
  if (text === 'none') return undefined;
  return VALUE.exec(text)?.[1] ?? text;
}

/** The difference a 406 "inequivalent arg" message describes, or `undefined` for any other text. */
function parseInequivalentArg(message: string): ArgumentDifference | undefined {
  const match = INEQUIVALENT.exec(message);
  if (!match) return undefined;
  const [, argument = '', kind, name = '', received = '', current = ''] = match;
  return {
    kind: kind === 'exchange' ? 'exchange' : 'queue',
    name,
    argument,
    expected: parseValue(received),
    actual: parseValue(current),
  };
}

function shown(value: string | undefined): string {
  return value === undefined ? '(not set)' : `'${value}'`;
}

/** One sentence: what differs, and what to do about it. */
function describeDifference(difference: ArgumentDifference): string {
  const { kind, name, argument, expected, actual } = difference;
  const remedy =
    kind === 'queue'
      ? 'Move its messages elsewhere (e.g. with a shovel), delete the queue and apply again, ' +
        'or change the configuration back.'
      : 'Delete the exchange (it holds no messages) and apply again, or change the configuration back.';
  return `${kind} '${name}' has ${argument} = ${shown(actual)} but the topology expects ${shown(expected)}. ${remedy}`;
}

/** One error for all differences; its `kind`, `entity` and `argument` come from the first. */
function topologyMismatchError(differences: readonly ArgumentDifference[]): TopologyMismatchError {
  const [first] = differences;
  if (first === undefined) throw new RangeError('topologyMismatchError needs at least one difference');
  const message =
    differences.length === 1
      ? describeDifference(first)
      : `The broker differs from the topology in ${differences.length} places:\n` +
        differences.map((d) => `- ${describeDifference(d)}`).join('\n');
  return new TopologyMismatchError(message, { kind: first.kind, entity: first.name, argument: first.argument });
}

export { describeDifference, parseInequivalentArg, topologyMismatchError };
export type { ArgumentDifference };
