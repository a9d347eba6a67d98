import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/invoke-child.js';

/**
 * Certificate verification is never turned off: no source file of the product (the functions, the
 * engine, the infrastructure) may carry a switch that disables it, whatever its value.
 */
const PRODUCT_FOLDERS = ['functions', 'shared', 'infra'];
const SWITCHES = [/rejectUnauthorized/, /NODE_TLS_REJECT_UNAUTHORIZED/, /checkServerIdentity/];
/** Files that name a switch only to refuse it: the synth check refuses NODE_TLS_REJECT_UNAUTHORIZED in functionEnvironment. */
const REFUSERS: Readonly<Record<string, RegExp>> = { 'shared/cdk/function-environment.ts': /NODE_TLS_REJECT_UNAUTHORIZED/ };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : sourceFiles(path);
    return /\.(ts|mts|js|mjs|json)$/.test(entry.name) ? [path] : [];
  });
}

describe('TLS certificate verification', () => {
  it('has no switch that turns it off anywhere in functions/, shared/ or infra/', () => {
    // Prepare
    const files = PRODUCT_FOLDERS.flatMap((folder) => sourceFiles(join(REPO_ROOT, folder)));
    // Act
    const hits = files.flatMap((file) =>
      SWITCHES.filter((pattern) => pattern.test(readFileSync(file, 'utf8')) && REFUSERS[relative(REPO_ROOT, file)]?.source !== pattern.source).map(
        (pattern) => `${relative(REPO_ROOT, file)}: ${pattern}`,
      ),
    );
    // Assess
    expect(files.length).toBeGreaterThan(20);
    expect(hits).toEqual([]);
  });
});
