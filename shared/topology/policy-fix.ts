/**
 * The `rabbitmqctl set_policy` commands `topology verify` and `apply` offer. AMQP 0.9.1 cannot set (or
 * read) policies, so Boomerang shows the command and never runs it. Both commands were run against
 * RabbitMQ 3.10.8 and 4.3.6 by test/integration/topology-risks.test.ts, with `--apply-to queues`, which
 * both accept (3.10 refuses `quorum_queues`); the pattern matches the one queue by its exact name.
 */

/** One policy, as data; `policyArgv` and `policyCommand` render it. */
type PolicyFix = {
  readonly name: string;
  readonly pattern: string;
  readonly definition: Readonly<Record<string, string | number>>;
};

/** `^name$` with every regex metacharacter escaped, so the policy matches that one queue only. */
function exactPattern(queue: string): string {
  return `^${queue.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
}

/** Dead-letters what the work queue would drop (past its delivery limit) to the parking lot. */
function deadLetterPolicy(workQueue: string, parkingQueue: string): PolicyFix {
  return {
    name: `boomerang-dead-letter-${workQueue}`,
    pattern: exactPattern(workQueue),
    definition: { 'dead-letter-exchange': '', 'dead-letter-routing-key': parkingQueue },
  };
}

/** Lifts RabbitMQ 4.x's default delivery limit of 20 from a parking lot declared without `x-delivery-limit`. */
function noDeliveryLimitPolicy(parkingQueue: string): PolicyFix {
  return { name: `boomerang-no-delivery-limit-${parkingQueue}`, pattern: exactPattern(parkingQueue), definition: { 'delivery-limit': -1 } };
}

/**
 * Gives an existing work queue what `native` mode needs (`definition`: the planned `x-*` arguments
 * as policy keys, without the `x-`). A policy cannot set the queue type, and cannot override every
 * argument (see native-check.ts): the check offers this only when it would work.
 */
function nativePolicy(workQueue: string, definition: PolicyFix['definition']): PolicyFix {
  return { name: `boomerang-native-${workQueue}`, pattern: exactPattern(workQueue), definition };
}

/** The `rabbitmqctl` arguments that set `fix` in `vhost`. */
function policyArgv(fix: PolicyFix, vhost = '/'): string[] {
  const where = vhost === '/' ? [] : ['-p', vhost];
  return ['set_policy', ...where, fix.name, fix.pattern, JSON.stringify(fix.definition), '--apply-to', 'queues'];
}

/** A POSIX shell word: as is when safe, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command line an operator pastes.
 * @example policyCommand(deadLetterPolicy('orders', 'orders.parked'))
 * // rabbitmqctl set_policy boomerang-dead-letter-orders '^orders$' '{"dead-letter-exchange":"","dead-letter-routing-key":"orders.parked"}' --apply-to queues
 */
function policyCommand(fix: PolicyFix, vhost = '/'): string {
  return ['rabbitmqctl', ...policyArgv(fix, vhost)].map(shellWord).join(' ');
}

export { deadLetterPolicy, nativePolicy, noDeliveryLimitPolicy, policyArgv, policyCommand };
export type { PolicyFix };
