import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { functionEntries } from '../../shared/cdk/bundles.js';
import { readQueueDefinitions } from '../../shared/cdk/definitions.js';
import { ConfigError } from '../../shared/errors.js';
import { REPO_ROOT, tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';

/** A limit, not a measurement: a child process with tsx and the engine, on a loaded 2-core machine. */
const CHILD_TIMEOUT_MS = 60_000;

let cleanups: (() => void)[] = [];

function folder(): string {
  const temp = tempFunctionsDir();
  cleanups.push(temp.remove);
  return temp.dir;
}

/** What `act` throws (each call is a child process: once is enough). */
function thrownBy(act: () => unknown): Error | undefined {
  try {
    act();
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

afterEach(() => {
  for (const remove of cleanups) remove();
  cleanups = [];
});

describe('Function: readQueueDefinitions', () => {
  it(
    'reads every queue of a folder in a child process: its deploy options, timings and the functionEnvironment it replaces',
    () => {
      // Act
      const queues = readQueueDefinitions({ functionsDir: join(REPO_ROOT, 'functions'), functionEnvironment: { CONCURRENCY: '4', HTTP_TIMEOUT_MS: '5000' } });
      // Assess
      expect(queues.map((q) => [q.name, q.workQueue, q.file, q.path, q.deploy.modes, q.deploy.pull.rateMinutes, q.deploy.retention?.olderThan])).toEqual([
        ['partner-sync', 'boomerang.partner-sync', 'functions/partner-sync.ts', join(REPO_ROOT, 'functions/partner-sync.ts'), ['pull', 'event'], 2, '14d'],
        ['webhooks', 'boomerang.webhooks', 'functions/webhooks.ts', join(REPO_ROOT, 'functions/webhooks.ts'), ['pull', 'event'], 1, undefined],
      ]);
      expect(queues.map((q) => q.timings)).toEqual([
        { httpTimeoutMs: 5000, safetyMarginMs: 3000 },
        { httpTimeoutMs: 5000, safetyMarginMs: 3000 },
      ]);
      expect(queues.map((q) => q.overrides)).toEqual([
        ['CONCURRENCY=4 is set but not used: concurrency in defineQueue("partner-sync") is 4'],
        ['CONCURRENCY=4 is set but not used: concurrency in defineQueue("webhooks") is 8'],
      ]);
      // The delay mode a file sets (partner-sync leaves it to DELAY_MODE): the construct's pull bundle then holds that path only, as npm run build's does
      expect(queues.map((q) => q.code)).toEqual([{}, { delayMode: 'tiers' }]);
      expect(functionEntries(queues.map((q) => ({ ...q, file: q.path }))).map((e) => [e.name, e.delayPath])).toEqual([
        ['partner-sync-pull', undefined],
        ['partner-sync-event', undefined],
        ['partner-sync-retention', undefined],
        ['webhooks-pull', 'copy'],
        ['webhooks-event', undefined],
      ]);
    },
    CHILD_TIMEOUT_MS,
  );

  it(
    'reads a list of files, whatever they print or leave running at import',
    () => {
      // Prepare: a file that writes to stdout and keeps a timer, which would keep a process alive
      const dir = folder();
      const file = writeQueueFile(dir, { template: 'orders-event', name: 'orders', workQueue: 'orders' });
      appendFileSync(file, 'console.log(\'{"not": "the answer"}\');\nsetInterval(() => undefined, 1000);\n');
      // Act
      const queues = readQueueDefinitions({ files: [file], functionEnvironment: {} });
      // Assess
      expect(queues.map((q) => [q.name, q.deploy.modes, q.deploy.event.timeoutSeconds])).toEqual([['orders', ['event'], 10]]);
    },
    CHILD_TIMEOUT_MS,
  );

  it.each([
    ['a file that fails at import, named', 'broken', 'throw new Error("no partner URL");\n', /broken\.ts: no partner URL/],
    [
      'a file that declares no queue, named',
      'helpers',
      'export const twice = (n: number) => n * 2;\n',
      /helpers\.ts declares no queue: a definition file must export `queue`/,
    ],
  ])(
    'throws a ConfigError for %s',
    (_what, name, text, message) => {
      // Prepare
      const file = join(folder(), `${name}.ts`);
      writeFileSync(file, text);
      // Act
      const error = thrownBy(() => readQueueDefinitions({ files: [file], functionEnvironment: {} }));
      // Assess
      expect(error).toBeInstanceOf(ConfigError);
      expect(error?.message).toMatch(message);
    },
    CHILD_TIMEOUT_MS,
  );

  it(
    'throws a ConfigError naming functionEnvironment and the queue whose functions would refuse it',
    () => {
      // Act
      const error = thrownBy(() => readQueueDefinitions({ functionsDir: join(REPO_ROOT, 'functions'), functionEnvironment: { CONNECT_TIMEOUT_MS: 'abc' } }));
      // Assess
      expect(error).toBeInstanceOf(ConfigError);
      expect(error?.message).toBe(
        'functionEnvironment: CONNECT_TIMEOUT_MS must be an integer from 100 to 120000; got "abc" (the functions of partner-sync would refuse to start with it)',
      );
    },
    CHILD_TIMEOUT_MS,
  );
});
