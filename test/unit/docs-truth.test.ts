/**
 * What the README and the docs say that a newcomer acts on, checked against the code: the services
 * `npm test` needs, the lines the demo and an invocation print, the handler example's 429, the
 * flags' names and a command that works as written.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { emptySummary } from '../../shared/observability/summary.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const README = read('README.md');

describe('the README', () => {
  it('says what npm test needs besides Node and RabbitMQ', () => {
    const quickStart = README.slice(README.indexOf('## Quick start'), README.indexOf('## How it works'));
    expect(quickStart).toMatch(/Redis/);
    expect(quickStart).toMatch(/rabbitmqctl/);
  });

  it('explains every line npm run local prints in its table', () => {
    const printed = [...read('shared/cli/local.ts').matchAll(/^\s+\['([a-z ]+)', (?:totals|messages|invocations|stats)/gm)].map((m) => m[1]);
    expect(printed.length).toBeGreaterThan(5);
    const rows = README.split('\n').filter((row) => row.startsWith('| `'));
    for (const line of printed)
      expect(
        rows.some((row) => row.split(' | ')[0]?.includes(`\`${line}\``)),
        line,
      ).toBe(true);
  });

  it('shows an invocation summary with every field one carries', () => {
    const example = /returns a summary:\n\n```json\n(.+)\n```/.exec(README)?.[1] ?? '{}';
    expect(Object.keys(JSON.parse(example) as object).sort()).toEqual(expect.arrayContaining(Object.keys(emptySummary()).sort()));
  });

  it("waits as long as a 429's Retry-After asks in its handler example, and pauses the queue as long", () => {
    const example = README.slice(README.indexOf('// functions/orders.ts'), README.indexOf('**3. Declare its queues'));
    expect(example).toMatch(/retry-after/i);
    expect(example).toMatch(/pauseQueue: true/);
  });

  it('names the summary field a paused invocation adds', () => {
    const example = README.slice(README.indexOf('returns a summary:'), README.indexOf('The delay path is a set of queues'));
    expect(example).toContain('`pausedUntil`');
  });
});

describe('the docs', () => {
  it('pause the queue on a 429 in the handler example, and say how, what it costs and what an operator sees', () => {
    const handlers = read('docs/handlers.md');
    const example = handlers.slice(handlers.indexOf('// functions/orders.ts'), handlers.indexOf('export const'));
    expect(example).toMatch(/res\.status === 429\) throw new RetryableError\([^)]*pauseQueue: true/);
    const pausing = handlers.split('## Pausing the queue when the partner says slow down')[1] ?? '';
    for (const topic of ['pauseQueue', '.pause', 'What it costs', 'round trips']) expect(pausing).toContain(topic);
    expect(read('docs/operations.md')).toContain('## A paused queue');
  });

  it('say that a tiers-mode delay waits for the next tier up, where they give the backoff', () => {
    const backoff = read('docs/handlers.md').split('## Backoff and rules')[1] ?? '';
    expect(backoff).toMatch(/tier/);
  });

  it('name the queue flags by what they name', () => {
    for (const path of ['README.md', 'docs/commands.md', 'docs/console.md', 'docs/operations.md', 'docs/configuration.md']) {
      const uses = read(path)
        .split('\n')
        .filter((line) => /--queue\b(?!-type)/.test(line) && !/old name/.test(line) && !/`--queue` said/.test(line));
      expect(uses, path).toEqual([]);
    }
  });

  it('give a 4.3 cluster command that works as written', () => {
    expect(read('docs/proof.md')).not.toContain('AMQP_URL=$(npm run --silent rabbitmq4 -- cluster urls) npm run test:cluster');
  });

  it('list what a replay drops of the properties', () => {
    const replay = read('docs/operations.md').split('**What a replayed message looks like.**')[1]?.slice(0, 800) ?? '';
    for (const property of ['expiration', 'userId', 'clusterId', 'persistent']) expect(replay).toContain(property);
  });
});
