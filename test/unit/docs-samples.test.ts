/**
 * Every TypeScript sample of the README and docs/ (each ```ts block), type-checked against the package's
 * source as a team's file is (`boomerang-rabbitmq` is shared/index.ts, `boomerang-rabbitmq/cdk`
 * shared/cdk/index.ts, through tsconfig's paths): an option renamed or moved under `advanced`, or an
 * import from a name the package no longer has, fails here before a reader copies it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/invoke-child.js';

const FILES = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Each ```ts block, with what a defineQueue fragment leaves out: the import and a handler. */
function samples(): { name: string; text: string }[] {
  return FILES.flatMap((file) =>
    [...readFileSync(join(REPO_ROOT, file), 'utf8').matchAll(/```ts\n([\s\S]+?)```/g)]
      .map((match) => match[1] ?? '')
      .map((block, i) => {
        // An option fragment (`rules: [...],`) is checked where it goes: inside a defineQueue call.
        const option = /^[a-zA-Z]+: /.test(block);
        const code = option ? `export const { queue } = defineQueue({ name: 'sample', workQueue: 'sample', handler,\n${block}});\n` : block;
        const imports =
          !code.includes('defineQueue(') || code.includes("from 'boomerang-rabbitmq'")
            ? ''
            : "import { defineQueue, type Handler } from 'boomerang-rabbitmq';\n";
        const handler = /\bhandler,/.test(code) && !/\bconst handler\b/.test(code) ? 'declare const handler: Handler;\n' : '';
        return { name: join(REPO_ROOT, 'test', `docs-sample-${file.replace(/\W/g, '-')}-${i}.ts`), text: `${imports}${handler}${code}` };
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

describe('the TypeScript samples of the README and docs/', () => {
  const found = samples();
  // A copy of the first with a misspelt key and an advanced option at the top level: proof that the check can fail.
  const broken = {
    name: found[0]!.name.replace('.ts', '-broken.ts'),
    text: found[0]!.text.replace('defineQueue({', 'defineQueue({ crashLoopLimit: 3, retries: 2,'),
  };
  // A sample importing the package by its old name, as docs/handlers.md once did.
  const oldName = {
    name: found[0]!.name.replace('.ts', '-old-name.ts'),
    text: `import { RetryableError } from 'boomerang';\nexport const e = new RetryableError('x');\n`,
  };
  // Packages a sample has the team install that this repository does not: typed as `any`, the rest is checked.
  const ambient = { name: join(REPO_ROOT, 'test', 'docs-samples-ambient.d.ts'), text: "declare module '@opentelemetry/exporter-trace-otlp-http';\n" };
  let errors: string[] = [];
  beforeAll(() => {
    errors = diagnostics([...found, broken, oldName, ambient]);
  }, COMPILE_TIMEOUT_MS);

  it('type-check against the package', () => {
    expect(found.length).toBeGreaterThanOrEqual(14);
    expect(errors.filter((error) => !error.startsWith(broken.name) && !error.startsWith(oldName.name))).toEqual([]);
  });

  it('fail to type-check with a misspelt or moved option, so that the check can fail', () => {
    expect(errors.filter((error) => error.startsWith(broken.name)).join('\n')).toMatch(/crashLoopLimit|retries/);
  });

  it("fail to type-check when they import the package by a name it does not have ('boomerang')", () => {
    expect(errors.filter((error) => error.startsWith(oldName.name)).join('\n')).toMatch(/Cannot find module 'boomerang'/);
  });
});
