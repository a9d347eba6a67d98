import { describe, expect, it } from 'vitest';
import { brokerMajor, deliveryLimitOf } from '../../shared/topology/delivery-limit.js';
import { deadLetterPolicy, noDeliveryLimitPolicy, policyArgv, policyCommand } from '../../shared/topology/policy-fix.js';
import { assertPlanFitsBroker, isTolerated, parkingLotCheck, workQueueCheck } from '../../shared/topology/queue-checks.js';
import { adoptedValue } from '../../shared/topology/read-arguments.js';

const quorum = { 'x-queue-type': 'quorum' } as const;

describe('deliveryLimitOf', () => {
  it.each([
    ['classic', { 'x-queue-type': 'classic' }, 4, { kind: 'none' }],
    ['3.x classic by default', {}, 3, { kind: 'none' }],
    ['4.x quorum without argument', quorum, 4, { kind: 'limit', limit: 20 }],
    ['3.x quorum without argument', quorum, 3, { kind: 'none' }],
    ['4.x quorum with -1', { ...quorum, 'x-delivery-limit': -1 }, 4, { kind: 'none' }],
    ['3.x quorum with -1: drops at once', { ...quorum, 'x-delivery-limit': -1 }, 3, { kind: 'limit', limit: 0 }],
    ['a set limit, any version', { ...quorum, 'x-delivery-limit': 5 }, 3, { kind: 'limit', limit: 5 }],
  ])('%s', (_name, args, major, expected) => {
    expect(deliveryLimitOf(args, major)).toMatchObject(expected);
  });

  it.each([
    ['4.3.6', 4],
    ['3.10.8', 3],
    [undefined, undefined],
    ['unknown', undefined],
  ])('reads the major of %s', (version, major) => {
    expect(brokerMajor(version)).toBe(major);
  });
});

describe('parkingLotCheck', () => {
  it.each([
    [
      '4.x with -1',
      { ...quorum, 'x-delivery-limit': -1 },
      4,
      /^no delivery limit \(x-delivery-limit -1 means none on RabbitMQ 4\.x\); a policy's positive/,
      undefined,
    ],
    ['3.x without argument', quorum, 3, /^no delivery limit \(RabbitMQ 3\.x quorum queues have none unless set\)/, undefined],
    ['classic', { 'x-queue-type': 'classic' }, 4, /^no delivery limit \(a classic queue has no delivery limit\)$/, undefined],
    ['4.x without argument: a policy lifts it', quorum, 4, /^delivery limit 20: parked messages can be dropped$/, noDeliveryLimitPolicy('p')],
    ['4.x with 5: recreate', { ...quorum, 'x-delivery-limit': 5 }, 4, /^delivery limit 5/, undefined],
  ])('%s', (_name, args, major, detail, fix) => {
    // Act
    const check = parkingLotCheck('p', args, major);
    // Assess
    expect(check.detail).toMatch(detail);
    expect(check.warning?.fix).toEqual(fix);
  });

  it('warns of a 4.x parking lot with its own limit, and says a policy cannot lift it', () => {
    expect(parkingLotCheck('p', { ...quorum, 'x-delivery-limit': 5 }, 4).warning?.message).toMatch(
      /dropped after 5 failed deliveries.*A policy cannot lift a limit the queue's arguments set: move its messages elsewhere/,
    );
  });

  it.each([
    ['4.x, whose 4.0-4.2 count a read', quorum, 4, 'on RabbitMQ 4.0-4.2 every read by `boomerang parked` or the console counts as one too'],
    [
      '3.x, which counts every read',
      { ...quorum, 'x-delivery-limit': 5 },
      3,
      'a lost connection; every read by `boomerang parked` or the console counts as one too',
    ],
  ])('says which reads count toward the limit on %s', (_name, args, major, text) => {
    expect(parkingLotCheck('p', args, major).warning?.message).toContain(text);
  });

  it('warns of -1 on 3.x: a parked message is dropped at its first failed delivery', () => {
    expect(parkingLotCheck('p', { ...quorum, 'x-delivery-limit': -1 }, 3).warning?.message).toContain('dropped at its first failed delivery');
  });

  it.each([
    [undefined, 4, 'could not all be read (cannot read past x-foo)'],
    [quorum, undefined, 'did not say its version'],
  ])('says when it cannot tell (%j on %s)', (args, major, text) => {
    expect(parkingLotCheck('p', args, major, 'cannot read past x-foo')).toEqual({ detail: expect.stringContaining(text) });
  });
});

describe('workQueueCheck', () => {
  it.each([
    ['4.x quorum without argument', quorum, 4, true],
    ['3.x quorum without argument', quorum, 3, false],
    ['any quorum with a limit', { ...quorum, 'x-delivery-limit': 3 }, 3, true],
    ['a limit and a dead-letter exchange', { ...quorum, 'x-delivery-limit': 3, 'x-dead-letter-exchange': 'dlx' }, 4, false],
    ['the default exchange counts as a target', { ...quorum, 'x-dead-letter-exchange': '' }, 4, false],
    ['classic', { 'x-queue-type': 'classic' }, 4, false],
    ['4.x with -1', { ...quorum, 'x-delivery-limit': -1 }, 4, false],
  ])('%s: warns %s', (_name, args, major, warns) => {
    // Act
    const check = workQueueCheck('orders', 'orders.parked', args, major);
    // Assess
    expect(check.warning?.fix).toEqual(warns ? deadLetterPolicy('orders', 'orders.parked') : undefined);
    if (warns)
      expect(check.warning?.message).toMatch(/^work queue 'orders' is a quorum queue with a delivery limit .* and no dead-letter target: a message is dropped/);
  });

  it('says when the arguments could not be read', () => {
    expect(workQueueCheck('orders', 'orders.parked', undefined, 4, 'cannot read past durable = false').detail).toContain(
      'whether it can drop messages is not known',
    );
  });
});

describe('isTolerated', () => {
  const difference = (actual: string | undefined) => ({ kind: 'queue', name: 'p', argument: 'x-delivery-limit', expected: '-1', actual }) as const;
  it.each([
    ['parking', difference(undefined), 4, true],
    ['parking', difference('-1'), 4, true],
    ['parking', difference('5'), 4, false],
    ['parking', difference(undefined), 3, false],
    ['delay', difference(undefined), 4, false],
  ] as const)('%s %j on %s: %s', (role, d, major, expected) => {
    expect(isTolerated(role, d, major)).toBe(expected);
  });
});

describe('assertPlanFitsBroker', () => {
  const plan = { exchanges: [], bindings: [], queues: [{ name: 'p', role: 'parking', onlyIfMissing: false, arguments: { 'x-delivery-limit': -1 } }] } as const;
  it.each([4, undefined])('accepts -1 on major %s', (major) => {
    expect(() => assertPlanFitsBroker(plan, major)).not.toThrow();
  });

  it('refuses -1 on 3.x', () => {
    expect(() => assertPlanFitsBroker(plan, 3)).toThrowError(/planned for RabbitMQ 4\.x .* the broker is 3\.x/);
  });
});

describe('policy commands', () => {
  it('dead-letters the work queue to the parking lot, matching that queue only', () => {
    expect(policyCommand(deadLetterPolicy('orders.v2', 'orders.v2.parked'))).toBe(
      `rabbitmqctl set_policy boomerang-dead-letter-orders.v2 '^orders\\.v2$' '{"dead-letter-exchange":"","dead-letter-routing-key":"orders.v2.parked"}' --apply-to queues`,
    );
  });

  it('names the vhost and quotes what the shell would split', () => {
    expect(policyArgv(noDeliveryLimitPolicy("it's"), 'prod')).toEqual([
      'set_policy',
      '-p',
      'prod',
      "boomerang-no-delivery-limit-it's",
      "^it's$",
      '{"delivery-limit":-1}',
      '--apply-to',
      'queues',
    ]);
    expect(policyCommand(noDeliveryLimitPolicy("it's"), 'prod')).toContain(`-p prod 'boomerang-no-delivery-limit-it'\\''s'`);
  });
});

describe('adoptedValue', () => {
  const d = (actual: string | undefined, actualType?: string) =>
    ({ kind: 'queue', name: 'q', argument: 'x-a', expected: undefined, actual, ...(actualType ? { actualType } : {}) }) as const;
  it.each([
    [d('1000', 'short'), undefined, 1000],
    [d('zz', 'longstr'), undefined, 'zz'],
    [d('true', 'bool'), undefined, true],
    [d('-1'), 5, -1],
    [d('orders'), 'x', 'orders'],
    [d(undefined), 5, undefined],
    [d('[1]', 'array'), undefined, undefined],
    [d('abc'), 5, undefined],
  ])('%j (declared %j) -> %j', (difference, declared, expected) => {
    expect(adoptedValue(difference, declared)).toEqual(expected);
  });
});
