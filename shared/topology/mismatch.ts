/**
 * Turns the broker's 406 PRECONDITION_FAILED text into data and into an error a person can act on.
 * The broker reports only the first differing argument of an entity (`readArguments` follows them all).
 * Texts seen on RabbitMQ 3.10:
 *   inequivalent arg 'x-message-ttl' for queue 'a' in vhost '/': received '2000' but current is '1000'
 *   ... received none but current is the value '1000' of type 'short'
 *   ... received the value 'zz' of type 'longstr' but current is none
 * and on other versions: received the value '2000' of type 'signedint' but current value is '1000' of type 'long'.
 */
import { BoomerangError } from '../errors.js';
import type { ArgumentDifference, TopologyWarning } from './types.js';

/**
 * An existing queue or exchange differs from what the topology expects. It lives with the topology, not
 * on the ground floor, because it carries the topology's warnings.
 */
class TopologyMismatchError extends BoomerangError {
  public readonly kind: 'queue' | 'exchange';
  public readonly entity: string;
  public readonly argument: string | undefined;
  /** Where messages can be dropped, found by the same run (apply reports them even when it throws). */
  public readonly warnings: readonly TopologyWarning[];
  /** Every differing argument of every entity (the first one gives `kind`, `entity`, `argument`). */
  public readonly differences: readonly ArgumentDifference[];
  /** What each differing queue held when apply checked it, by name: what deleting it would lose. */
  public readonly messageCounts: ReadonlyMap<string, number>;

  public constructor(
    message: string,
    details: {
      kind: 'queue' | 'exchange';
      entity: string;
      argument?: string;
      warnings?: readonly TopologyWarning[];
      differences?: readonly ArgumentDifference[];
      messageCounts?: ReadonlyMap<string, number>;
    },
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'TopologyMismatchError';
    this.kind = details.kind;
    this.entity = details.entity;
    this.argument = details.argument;
    this.warnings = details.warnings ?? [];
    this.differences = details.differences ?? [];
    this.messageCounts = details.messageCounts ?? new Map();
  }
}

const INEQUIVALENT = new RegExp(
  "inequivalent arg '([^']+)' for (queue|exchange) '(.*)' in vhost '.*': " + 'received (.+?) but current (?:value )?is (.+?)"?$',
  's',
);
const VALUE = /^(?:the value )?'(.*?)'(?: of type '([\w-]+)')?$/s;

/** Reads `none`, `'1000'`, `the value '1000' of type 'long'` or `'1000' of type 'long'`. */
function parseValue(text: string): string | undefined {
  if (text === 'none') return undefined;
  return VALUE.exec(text)?.[1] ?? text;
}

function parseType(text: string): string | undefined {
  return VALUE.exec(text)?.[2];
}

/** The difference a 406 "inequivalent arg" message describes, or `undefined` for any other text. */
function parseInequivalentArg(message: string): ArgumentDifference | undefined {
  const match = INEQUIVALENT.exec(message);
  if (!match) return undefined;
  const [, argument = '', kind, name = '', received = '', current = ''] = match;
  const actualType = parseType(current);
  return {
    kind: kind === 'exchange' ? 'exchange' : 'queue',
    name,
    argument,
    expected: parseValue(received),
    actual: parseValue(current),
    ...(actualType === undefined ? {} : { actualType }),
  };
}

function shown(value: string | undefined): string {
  return value === undefined ? '(not set)' : `'${value}'`;
}

/** What to do about an entity whose arguments differ; `messageCount` says what deleting a queue costs. */
function remedy(kind: 'queue' | 'exchange', name: string, messageCount?: number): string {
  if (kind === 'exchange') {
    return 'Delete the exchange (it holds no messages; its bindings go with it and apply makes them again) and run apply again, or change the configuration back.';
  }
  const cannot = 'Apply cannot change the arguments of an existing queue.';
  if (messageCount === 0) return `${cannot} It is empty: delete it (rabbitmqctl delete_queue '${name}') and run apply again, or change the configuration back.`;
  const messages = messageCount === undefined ? 'its messages' : `its ${messageCount} message${messageCount === 1 ? '' : 's'}`;
  return `${cannot} Move ${messages} elsewhere first (e.g. with a shovel), since deleting the queue loses them, then delete it and run apply again; or change the configuration back.`;
}

/** One paragraph for one entity: every differing argument with both values, then what to do. */
function describeDifferences(differences: readonly ArgumentDifference[], messageCount?: number): string {
  const [first] = differences;
  if (first === undefined) throw new RangeError('describeDifferences needs at least one difference');
  const what = differences.map((d) => `${d.argument} = ${shown(d.actual)} but the topology expects ${shown(d.expected)}`).join('; ');
  return `${first.kind} '${first.name}' has ${what}. ${remedy(first.kind, first.name, messageCount)}`;
}

/**
 * One error for all differences, one paragraph per entity; its `kind`, `entity` and `argument` come
 * from the first. `messageCounts` (by queue name) says what deleting each queue would cost; `warnings`
 * travel with the error, so a failed apply still tells where messages can be dropped.
 */
function topologyMismatchError(
  differences: readonly ArgumentDifference[],
  messageCounts: ReadonlyMap<string, number> = new Map(),
  warnings: readonly TopologyWarning[] = [],
): TopologyMismatchError {
  const [first] = differences;
  if (first === undefined) throw new RangeError('topologyMismatchError needs at least one difference');
  const byEntity = new Map<string, ArgumentDifference[]>();
  for (const d of differences) {
    const key = `${d.kind} ${d.name}`;
    byEntity.set(key, [...(byEntity.get(key) ?? []), d]);
  }
  const paragraphs = [...byEntity.values()].map((group) =>
    describeDifferences(group, group[0]?.kind === 'queue' ? messageCounts.get(group[0].name) : undefined),
  );
  const message =
    paragraphs.length === 1
      ? (paragraphs[0] as string)
      : `The broker differs from the topology in ${paragraphs.length} places:\n${paragraphs.map((p) => `- ${p}`).join('\n')}`;
  return new TopologyMismatchError(message, { kind: first.kind, entity: first.name, argument: first.argument, warnings, differences, messageCounts });
}

export { describeDifferences, parseInequivalentArg, topologyMismatchError, TopologyMismatchError };
