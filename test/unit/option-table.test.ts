import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Config, loadConfig } from '../../shared/config/config.js';
import type { ConfigInCode } from '../../shared/config/config-in-code.js';
import type { Env } from '../../shared/config/env.js';
import { describeRange, type OptionRange } from '../../shared/config/option-range.js';
import { OPTIONS, type OptionSpec } from '../../shared/config/option-table.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';

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
  const [head, field] = path.split('.') as [keyof ConfigInCode, string | undefined];
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

/** The cells of each table row in docs/configuration.md and docs/deploy.md. */
const DOC_ROWS = ['configuration.md', 'deploy.md']
  .flatMap((file) => readFileSync(join(REPO_ROOT, 'docs', file), 'utf8').split('\n'))
  .filter((line) => line.startsWith('| '))
  .map((line) =>
    line
      .slice(1, -1)
      .split(' | ')
      .map((cell) => cell.trim()),
  );

describe('docs/configuration.md and docs/deploy.md', () => {
  it.each(ROWS)('%s: every option appears in a table of the docs', (_name, option) => {
    expect(DOC_ROWS.some((cells) => cells.some((cell) => cell.includes(`\`${option.variable}\``)))).toBe(true);
  });

  it.each(ROWS)('%s: a row of its own states the default, the range and the name in code of OPTIONS', (_name, option) => {
    // Prepare
    const row = DOC_ROWS.find((cells) => cells.includes(`\`${option.variable}\``));
    if (row === undefined) return; // documented in a row shared with other variables: the previous test
    const at = row.indexOf(`\`${option.variable}\``);
    // Numbers are written with spaces between thousands (3 600 000).
    const text = row
      .slice(at + 1)
      .join(' | ')
      .replace(/(\d) (?=\d{3}\b)/g, '$1');
    const { range } = option;
    // Assess
    if (at === 1) expect(row[0]).toBe(option.code === undefined ? '-' : `\`${option.code}\``);
    if (option.default !== undefined) expect(row[at + 1]!.replace(/`/g, '')).toMatch(new RegExp(`^${String(option.default)}\\b`));
    if (range.type === 'choice') for (const word of range.choices) expect(text).toContain(`\`${word}\``);
    if (range.type === 'fraction') expect(text).toContain('0 to below 1');
    if (range.type === 'number' || (range.type === 'integer' && range.max !== undefined)) expect(text).toContain(`${range.min} to ${range.max}`);
    if (range.type === 'integer' && range.max === undefined) expect(text).toMatch(new RegExp(`at least ${range.min}|\\b${range.min} to`));
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
