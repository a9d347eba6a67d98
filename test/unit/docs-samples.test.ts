/**
 * The `defineQueue` examples of the README and docs/configuration.md, type-checked against the package's
 * source as a team's file is (`boomerang-rabbitmq` is shared/index.ts through tsconfig's paths): an
 * option renamed or moved under `advanced` fails here before a reader copies the old one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/invoke-child.js';

const FILES = ['README.md', 'docs/configuration.md'];

/** Each ```ts block that calls defineQueue, with what a fragment leaves out: the import and a handler. */
function samples(): { name: string; text: string }[] {
  return FILES.flatMap((file) =>
    [...readFileSync(join(REPO_ROOT, file), 'utf8').matchAll(/```ts\n([\s\S]+?)```/g)]
      .map((match) => match[1] ?? '')
      .filter((block) => block.includes('defineQueue('))
      .map((block, i) => {
        const imports = block.includes("from 'boomerang-rabbitmq'") ? '' : "import { defineQueue, type Handler } from 'boomerang-rabbitmq';\n";
        const handler = /\bhandler,/.test(block) ? 'declare const handler: Handler;\n' : '';
        return { name: join(REPO_ROOT, 'test', `docs-sample-${file.replace(/\W/g, '-')}-${i}.ts`), text: `${imports}${handler}${block}` };
      }),
  );
}

/** The diagnostics tsc gives the samples, with the repository's compiler options. */
function diagnostics(files: readonly { name: string; text: string }[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(REPO_ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (config === undefined) throw new Error('tsconfig.json does not parse');
  const virtual = new Map(files.map((file) => [file.name, file.text]));
  const host = ts.createCompilerHost(config.options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) => {
    const text = virtual.get(name);
    return text === undefined ? getSourceFile.call(host, name, language, ...rest) : ts.createSourceFile(name, text, language);
  };
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  const program = ts.createProgram([...virtual.keys()], config.options, host);
  return files.flatMap((file) =>
    [...program.getSyntacticDiagnostics(program.getSourceFile(file.name)), ...program.getSemanticDiagnostics(program.getSourceFile(file.name))].map(
      (d) => `${file.name}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    ),
  );
}

/** A limit, not a measurement: one program over shared/ took 25 to 75 s while the unit suite ran beside it on the loaded 2-core machine. */
const COMPILE_TIMEOUT_MS = 180_000;

describe('the defineQueue examples of the README and docs/configuration.md', () => {
  const found = samples();
  // A copy of the first with a misspelt key and an advanced option at the top level: proof that the check can fail.
  const broken = {
    name: found[0]!.name.replace('.ts', '-broken.ts'),
    text: found[0]!.text.replace('defineQueue({', 'defineQueue({ crashLoopLimit: 3, retries: 2,'),
  };
  let errors: string[] = [];
  beforeAll(() => {
    errors = diagnostics([...found, broken]);
  }, COMPILE_TIMEOUT_MS);

  it('type-check against the package', () => {
    expect(found.length).toBeGreaterThanOrEqual(3);
    expect(errors.filter((error) => !error.startsWith(broken.name))).toEqual([]);
  });

  it('fail to type-check with a misspelt or moved option, so that the check can fail', () => {
    expect(errors.filter((error) => error.startsWith(broken.name)).join('\n')).toMatch(/crashLoopLimit|retries/);
  });
});
