import { describe, expect, it } from 'vitest';
import { defineQueue, isQueueDefinition } from '../../shared/queues/define-queue.js';
import type { QueueOptions } from '../../shared/queues/queue-options.js';
import { configErrorOf as configError } from '../helpers/config-error.js';

const handler = async (): Promise<void> => undefined;
const BASE: QueueOptions = { name: 'orders', handler, workQueue: 'orders' };

describe('defineQueue', () => {
  it('returns a definition and the two Lambda handlers', () => {
    // Act
    const { queue, pull, event } = defineQueue({ ...BASE, deploy: { modes: ['event'] } });
    // Assess
    expect(isQueueDefinition(queue)).toBe(true);
    expect(queue).toMatchObject({ name: 'orders', workQueue: 'orders', deploy: { modes: ['event'], virtualHost: '/' } });
    expect(typeof pull).toBe('function');
    expect(typeof event).toBe('function');
  });

  it('puts the options in code before the environment, and the environment before the defaults', () => {
    // Prepare
    const { queue } = defineQueue({ ...BASE, retry: { maxRetries: 8 }, batchSize: 50, advanced: { delayMode: 'exact' } });
    const env = { WORK_QUEUE: 'from-env', MAX_RETRIES: '2', BACKOFF_INITIAL_MS: '300', BATCH_SIZE: '7', CONCURRENCY: '3', DELAY_MODE: 'tiers' };
    // Act
    const config = queue.loadConfig(env);
    // Assess
    expect(config).toMatchObject({ workQueue: 'orders', parkingQueue: 'orders.parked', batchSize: 50, concurrency: 3, delayMode: 'exact' });
    expect(config.policy).toMatchObject({ maxRetries: 8, initialDelayMs: 300, multiplier: 2 });
  });

  it('does not read a variable that an option in code replaces, so a bad one cannot fail the start', () => {
    const { queue } = defineQueue({ ...BASE, retry: { maxRetries: 3 }, batchSize: 10 });
    expect(queue.loadConfig({ MAX_RETRIES: 'abc', BATCH_SIZE: 'lots' }).policy.maxRetries).toBe(3);
  });

  it('lists the variables an option in code replaces, with both values, an invalid one too', () => {
    // Prepare
    const { queue } = defineQueue({ ...BASE, name: 'qa-invoices', retry: { maxRetries: 5 } });
    // Act
    const overrides = queue.overrides({ MAX_RETRIES: '-1', BACKOFF_INITIAL_MS: '200' });
    // Assess: BACKOFF_INITIAL_MS is not given in code, so it is used
    expect(overrides).toEqual([
      {
        variable: 'MAX_RETRIES',
        envValue: '-1',
        fileValue: '5',
        option: 'retry.maxRetries in defineQueue("qa-invoices")',
        envValueInvalid: 'MAX_RETRIES must be an integer from 0 to 1000; got "-1"',
      },
    ]);
  });

  it('resolves rules in code against the policy in code', () => {
    // Act
    const { queue } = defineQueue({
      ...BASE,
      retry: { maxRetries: 4, maxDelayMs: 60_000 },
      rules: [
        { match: { errorName: 'Conflict' }, retry: false },
        { match: { errorName: 'Busy' }, maxRetries: 9 },
      ],
    });
    // Assess
    const { rules } = queue.loadConfig({ RETRY_RULES: 'not json, and not read' });
    expect(rules.map((r) => [r.retry, r.policy.maxRetries, r.policy.maxDelayMs])).toEqual([
      [false, 4, 60_000],
      [true, 9, 60_000],
    ]);
  });

  it('names each function after the queue and the mode unless FUNCTION_NAME says otherwise', () => {
    const { queue } = defineQueue(BASE);
    expect([
      queue.loadConfig({}, 'pull').functionName,
      queue.loadConfig({}, 'event').functionName,
      queue.loadConfig({ FUNCTION_NAME: 'x' }).functionName,
    ]).toEqual(['boomerang-orders-pull', 'boomerang-orders-event', 'x']);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a bad name', { name: 'Orders_1' }, 'name in defineQueue("Orders_1") must be lower-case letters, digits and hyphens'],
    ['an unknown option', { retries: 3 }, 'Unknown option retries in defineQueue("orders")'],
    ['a misspelt option', { concurency: 3 }, 'Unknown option concurency in defineQueue("orders") (did you mean concurrency?); expected one of name, handler'],
    [
      'a misspelt advanced option',
      { advanced: { crashLoopLimt: 3 } },
      'Unknown option advanced.crashLoopLimt in defineQueue("orders") (did you mean crashLoopLimit?)',
    ],
    ['a misspelt deploy option', { deploy: { pull: { rate: 1 } } }, 'Unknown option deploy.pull.rate in defineQueue("orders") (did you mean rateMinutes?)'],
    ['an unknown option nothing is close to', { zebra: 1 }, 'Unknown option zebra in defineQueue("orders"); expected one of'],
    ['no handler', { handler: undefined }, 'handler in defineQueue("orders") must be a function'],
    ['no work queue', { workQueue: undefined }, 'workQueue in defineQueue("orders") is required'],
    [
      'a retry field out of range',
      { retry: { maxRetries: -1 } },
      'Expected `maxRetries` in retry of defineQueue("orders") to be an integer from 0 to 1000, got -1',
    ],
    ['an unknown retry field', { retry: { maxRetry: 3 } }, 'Unknown key `maxRetry` in retry of defineQueue("orders")'],
    ['a batch size out of range', { batchSize: 0 }, 'batchSize in defineQueue("orders") must be an integer from 1 to 2000; got 0'],
    ['a batch size that is not whole', { batchSize: 1.5 }, 'batchSize in defineQueue("orders") must be an integer from 1 to 2000; got 1.5'],
    ['a concurrency that is not a number', { concurrency: '8' }, 'concurrency in defineQueue("orders") must be a number; got "8"'],
    ['a bad delay mode', { advanced: { delayMode: 'later' } }, 'advanced.delayMode in defineQueue("orders") must be one of tiers, exact, native; got "later"'],
    ['a bad ack order', { advanced: { ackOrder: 'whenever' } }, 'advanced.ackOrder in defineQueue("orders") must be one of publish-then-ack, ack-then-publish'],
    [
      'a bad delay mode at its old place, named at its new one',
      { delayMode: 'later' },
      'advanced.delayMode in defineQueue("orders") must be one of tiers, exact, native; got "later"',
    ],
    [
      'an advanced option at the top level',
      { crashLoopLimit: 3 },
      'crashLoopLimit in defineQueue("orders") is an advanced option: write it as advanced: { crashLoopLimit: ... }',
    ],
    [
      'an unknown advanced option',
      { advanced: { batchSize: 3 } },
      'Unknown option advanced.batchSize in defineQueue("orders"); expected one of delayMode, delayResolutionMs',
    ],
    ['advanced that is no object', { advanced: [] }, 'advanced in defineQueue("orders") must be an object; got []'],
    [
      'an option at its old and its new place',
      { tracing: 'xray', advanced: { tracing: 'off' } },
      'tracing in defineQueue("orders") is given twice: remove the top-level tracing, keep advanced.tracing',
    ],
    [
      "a crash-loop limit past the broker's",
      { advanced: { crashLoopLimit: 21 } },
      'advanced.crashLoopLimit in defineQueue("orders") must be from 0 (off) to 20, got 21',
    ],
    [
      "a retry header in the broker's namespace",
      { advanced: { retryHeader: 'x-death' } },
      'advanced.retryHeader in defineQueue("orders") must not start with "x-"',
    ],
    [
      'a reserved exact prefix',
      { advanced: { exactDelayPrefix: 'amq.delay' } },
      'advanced.exactDelayPrefix in defineQueue("orders") must not start with "amq."',
    ],
    ['a reserved queue name', { workQueue: 'amq.orders' }, 'workQueue in defineQueue("orders") must not start with "amq."'],
    ['a parking lot equal to the work queue', { parkingQueue: 'orders' }, 'the parking queue must differ from the work queue in defineQueue("orders")'],
    ['a bad rule', { rules: [{ match: {}, retry: false }] }, '`match` in rules of defineQueue("orders")[0] is empty'],
    ['competing modes not acknowledged', { deploy: { modes: ['pull', 'event'] } }, 'deploy.modes in defineQueue("orders") deploys both functions on one queue'],
    [
      'an acknowledgement without both modes',
      { deploy: { acknowledgeCompetingModes: true } },
      'deploy.acknowledgeCompetingModes in defineQueue("orders") applies only with modes',
    ],
    ['an unknown mode', { deploy: { modes: ['push'] } }, "deploy.modes in defineQueue(\"orders\") must be ['pull'], ['event'] or ['pull', 'event']"],
    [
      'options for a mode not deployed',
      { deploy: { event: { batchSize: 5 } } },
      'deploy.event in defineQueue("orders") is set, but deploy.modes does not include \'event\'',
    ],
    [
      'a schedule out of range',
      { deploy: { pull: { rateMinutes: 0 } } },
      'deploy.pull.rateMinutes in defineQueue("orders") must be an integer from 1 to 1440; got 0',
    ],
    ['an unknown deploy option', { deploy: { pull: { rate: 1 } } }, 'Unknown option deploy.pull.rate in defineQueue("orders")'],
    [
      'native delays on classic queues',
      { advanced: { delayMode: 'native', queueType: 'classic' } },
      "advanced.delayMode 'native' in defineQueue(\"orders\") needs advanced.queueType 'quorum'",
    ],
    [
      'native delays in event mode',
      { advanced: { delayMode: 'native' }, deploy: { modes: ['event'] } },
      'defineQueue("orders"): delayMode \'native\' is served by the pull function only',
    ],
    [
      'native delays in both modes',
      { advanced: { delayMode: 'native' }, deploy: { modes: ['pull', 'event'], acknowledgeCompetingModes: true } },
      "deploy.modes ['pull'], or use delayMode 'tiers' or 'exact' for event mode",
    ],
  ])('refuses %s at once, naming the option and the queue', (_what, change, message) => {
    // Act
    const error = configError(() => defineQueue({ ...BASE, ...change } as QueueOptions));
    // Assess
    expect(error.message).toContain(message);
  });

  it('reads an advanced option at its old top-level place for one release, warning with its new place', () => {
    // Act
    const { queue } = defineQueue({ ...BASE, tracing: 'xray', maxMessages: 50 });
    // Assess
    expect(queue.deprecations).toEqual([
      'maxMessages in defineQueue("orders") is deprecated: write advanced.maxMessages (the top-level key is read until the next release)',
      'tracing in defineQueue("orders") is deprecated: write advanced.tracing (the top-level key is read until the next release)',
    ]);
    expect(queue.loadConfig({ TRACING: 'off' })).toMatchObject({ tracing: 'xray', maxMessages: 50 });
  });

  it('warns of nothing for options at their places', () => {
    expect(defineQueue({ ...BASE, batchSize: 10, advanced: { tracing: 'xray' } }).queue.deprecations).toEqual([]);
  });

  it('takes in code the options that were environment-only, the code first, the environment for the rest', () => {
    // Prepare
    const { queue } = defineQueue({ ...BASE, advanced: { breakerThreshold: 0, crashLoopLimit: 4, maxMessageBytes: 1024, retryHeader: 'retry-no' } });
    // Act
    const config = queue.loadConfig({ BREAKER_THRESHOLD: '7', PUBLISH_TIMEOUT_MS: '2000', EXACT_DELAY_PREFIX: 'team.delay' });
    // Assess
    expect(config).toMatchObject({
      breakerThreshold: 0,
      crashLoopLimit: 4,
      maxMessageBytes: 1024,
      retryHeader: 'retry-no',
      publishTimeoutMs: 2000,
      exactDelayPrefix: 'team.delay',
    });
    expect(queue.overrides({ BREAKER_THRESHOLD: '7' })).toEqual([
      { variable: 'BREAKER_THRESHOLD', envValue: '7', fileValue: '0', option: 'advanced.breakerThreshold in defineQueue("orders")' },
    ]);
  });

  it('names the variable, not the code, for a bad value the environment gives at the first invocation', () => {
    const { queue } = defineQueue(BASE);
    expect(configError(() => queue.loadConfig({ MAX_RETRIES: 'abc' })).message).toContain('MAX_RETRIES must be an integer from 0 to 1000; got "abc"');
  });
});
