import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Config, loadConfig } from '../../shared/config/config.js';
import { type ConfigInCode, pathInCode } from '../../shared/config/config-in-code.js';
import type { Env } from '../../shared/config/env.js';
import { describeRange, type OptionRange } from '../../shared/config/option-range.js';
import { OPTIONS, type OptionSpec } from '../../shared/config/option-table.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';
import { docRows, withRenderedTables } from '../helpers/option-docs.js';
import { EVERYDAY_KEYS } from '../../shared/queues/queue-options.js';

type Name = keyof typeof OPTIONS;
type Outcome = { readonly accepted: true; readonly value: unknown } | { readonly accepted: false; readonly message: string };

const SOURCE = 'defineQueue("table")';
const REDIS = 'redis://cache:6379';

/** The values at and just past each bound of `range`, as code gives them. */
function boundaries(range: OptionRange): { accepted: (number | string)[]; refused: (number | string)[] } {
  switch (range.type) {
    case 'integer':
      return range.max === undefined
        ? { accepted: [range.min, range.min + 1], refused: [range.min - 1, range.min + 0.5] }
        : { accepted: [range.min, range.max], refused: [range.min - 1, range.max + 1, range.min + 0.5] };
    case 'number':
      return { accepted: [range.min, range.max, (range.min + range.max) / 2], refused: [range.min - 0.01, range.max + 0.01] };
    case 'fraction':
      return { accepted: [0, 0.5, 0.999], refused: [-0.01, 1, 1.5] };
    case 'choice':
      return { accepted: [...range.choices], refused: ['nope', range.choices[0]!.toUpperCase()] };
    case 'text':
      // A blank variable means "unset", so the environment cannot give one: what else a name needs is its reader's check (config.test.ts).
      return { accepted: ['retry-count'], refused: [] };
    case 'http-url':
      return {
        accepted: ['http://127.0.0.1:15672', 'https://b-1.mq.eu-west-1.amazonaws.com', 'https://mq.example.com/rabbitmq/'],
        refused: ['amqps://b-1.mq.eu-west-1.amazonaws.com:5671', 'mq.example.com:15672', 'https://mq.example.com/?vhost=prod'],
      };
  }
}

/** What else a row needs to be read at all (the secret's variables need AMQP_SECRET_ID), or to keep the cross-field rules quiet. */
const CONTEXT: Partial<Record<Name, { env: Env; code?: Partial<ConfigInCode> }>> = {
  maxDelayMs: { env: { BACKOFF_INITIAL_MS: '1' }, code: { retry: { initialDelayMs: 1 } } },
  idempotencyTtlSeconds: { env: { IDEMPOTENCY_STORE: REDIS } },
  rateLimitShares: { env: { RATE_LIMIT_PER_SECOND: '10' } },
  amqpPort: { env: { AMQP_SECRET_ID: 's' } },
  amqpTls: { env: { AMQP_SECRET_ID: 's' } },
  secretCacheSeconds: { env: { AMQP_SECRET_ID: 's' } },
};

/** Where a row's value lands in the config. */
function valueIn(config: Config, name: Name): unknown {
  if (name === 'idempotencyTtlSeconds') return config.idempotency?.ttlSeconds;
  if (name === 'rateLimitPerSecond') return config.rateLimit?.perSecond;
  if (name === 'rateLimitShares') return config.rateLimit?.shares;
  if (name === 'amqpPort') return config.amqpSecret?.port;
  if (name === 'amqpTls') return config.amqpSecret?.tls === undefined ? undefined : String(config.amqpSecret.tls);
  if (name === 'secretCacheSeconds') return config.amqpSecret?.cacheSeconds;
  if ((OPTIONS[name] as OptionSpec).code?.startsWith('retry.')) return config.policy[name as keyof Config['policy']];
  return config[name as keyof Config];
}

function outcome(name: Name, load: () => Config): Outcome {
  try {
    return { accepted: true, value: valueIn(load(), name) };
  } catch (error) {
    return { accepted: false, message: (error as Error).message };
  }
}

function fromEnv(name: Name, value: number | string): Outcome {
  return outcome(name, () => loadConfig({ ...CONTEXT[name]?.env, [OPTIONS[name].variable]: String(value) }));
}

/** The option given in code, its variable unset. */
function fromCode(name: Name, value: number | string): Outcome {
  const path = (OPTIONS[name] as OptionSpec).code!;
  const context = CONTEXT[name]?.code ?? {};
  const [head, field] = pathInCode(path) as [keyof ConfigInCode, string | undefined];
  const given =
    field === undefined
      ? { [head]: value }
      : head === 'idempotency'
        ? { idempotency: { store: REDIS, [field]: value } }
        : { [head]: { ...(context[head] as object), [field]: value } };
  return outcome(name, () => loadConfig({}, 'boomerang-table-pull', { ...context, ...given, source: SOURCE } as ConfigInCode));
}

const ROWS = Object.entries(OPTIONS) as [Name, OptionSpec][];
const IN_CODE = ROWS.filter(([, option]) => option.code !== undefined);

describe('OPTIONS', () => {
  it.each(ROWS)('%s: the environment takes each bound of the range and refuses what lies past it, naming the variable and the range', (name, option) => {
    // Prepare
    const { accepted, refused } = boundaries(option.range);
    // Act
    const taken = accepted.map((value) => fromEnv(name, value));
    const refusals = refused.map((value) => fromEnv(name, value));
    // Assess
    expect(taken).toEqual(accepted.map((value) => ({ accepted: true, value })));
    for (const [i, refusal] of refusals.entries()) {
      expect(refusal, `${option.variable}=${refused[i]}`).toMatchObject({ accepted: false });
      expect((refusal as { message: string }).message).toContain(
        `${option.variable} must be ${describeRange(option.range)}; got ${JSON.stringify(String(refused[i]))}`,
      );
    }
  });

  it.each(IN_CODE)('%s: code and environment accept and refuse the same bounds, and state the same range', (name, option) => {
    // Prepare
    const { accepted, refused } = boundaries(option.range);
    // Act, Assess
    for (const value of [...accepted, ...refused]) {
      const env = fromEnv(name, value);
      const code = fromCode(name, value);
      expect({ value, accepted: code.accepted }).toEqual({ value, accepted: env.accepted });
      if (code.accepted) expect(code.value).toEqual((env as { value: unknown }).value);
      else {
        expect(code.message).toContain(SOURCE);
        expect(code.message).toContain(describeRange(option.range));
        expect((env as { message: string }).message).toContain(option.variable);
      }
    }
  });

  it.each(ROWS.filter(([, option]) => option.default !== undefined))('%s: its default is what an empty environment gives', (name, option) => {
    // Act
    const given = outcome(name, () => loadConfig({ ...CONTEXT[name]?.env }));
    // Assess
    expect(given).toEqual({ accepted: true, value: option.default });
  });
});

describe('docs/configuration.md', () => {
  it('holds the option tables the schema renders (WRITE_OPTION_TABLES=1 rewrites them)', () => {
    // Prepare
    const path = join(REPO_ROOT, 'docs/configuration.md');
    const written = readFileSync(path, 'utf8');
    // Act
    const rendered = withRenderedTables(written);
    if (process.env.WRITE_OPTION_TABLES === '1') writeFileSync(path, rendered);
    // Assess
    expect(written).toBe(rendered);
  });

  it('names every option of the schema once, in code or in the environment', () => {
    // Act
    const names = docRows().map((row) => row.code ?? row.variable);
    // Assess
    expect(new Set(names).size).toBe(names.length);
    for (const option of Object.values(OPTIONS as Record<string, OptionSpec>)) expect(docRows().some((row) => row.variable === option.variable)).toBe(true);
  });
});

describe('the everyday options', () => {
  it("are defineQueue's top-level keys, at most twelve with the broker connection, each with a row", () => {
    // Act
    const keys = new Set(
      docRows()
        .filter((row) => row.tier === 'everyday')
        .map((row) => row.code!.split('.')[0]),
    );
    // Assess
    expect([...keys].sort()).toEqual([...EVERYDAY_KEYS].sort());
    expect(EVERYDAY_KEYS.length + 1).toBeLessThanOrEqual(12);
  });

  it('can each be set in code and in the environment, but for the name, the handler and how the stack deploys it', () => {
    const envOnly = docRows().filter((row) => (row.tier === 'everyday' || row.tier === 'advanced') && (row.code === undefined || row.variable === undefined));
    expect(envOnly.map((row) => row.code ?? row.variable)).toEqual(['name', 'handler', 'deploy']);
  });
});

describe('RetryPolicy', () => {
  it('documents each field with the default of OPTIONS', () => {
    // Prepare
    const source = readFileSync(join(REPO_ROOT, 'shared/retry/retry-policy.ts'), 'utf8');
    // Act
    const documented = [...source.matchAll(/@default (\S+) \*\/\n\s+readonly (\w+):/g)].map(([, value, key]) => [key, Number(value)]);
    // Assess
    expect(Object.fromEntries(documented)).toEqual({
      maxRetries: OPTIONS.maxRetries.default,
      initialDelayMs: OPTIONS.initialDelayMs.default,
      multiplier: OPTIONS.multiplier.default,
      maxDelayMs: OPTIONS.maxDelayMs.default,
      jitter: OPTIONS.jitter.default,
    });
  });
});
