import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/invoke-child.js';

type LockPackage = { readonly version?: string; readonly license?: unknown; readonly dev?: boolean };

const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { license?: string; dependencies: Record<string, string> };
const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockPackage> };
const page = readFileSync(join(REPO_ROOT, 'docs', 'dependencies.md'), 'utf8');

/**
 * Licences that let an Apache-2.0 package depend on, bundle and redistribute the code, with its notice
 * kept (the bundles keep them in index.mjs.LEGAL.txt): permissive licences with no copyleft and no
 * field-of-use limit. Anything else (GPL, LGPL, MPL, SSPL, a custom or missing licence) must be read
 * by a person before it joins the runtime tree, so it fails here.
 */
const ALLOWED = new Set(['Apache-2.0', 'MIT', 'MIT-0', 'ISC', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD']);

/**
 * What a team installs with the package: every locked package outside the development tree (npm marks
 * those `dev`), read from the lock so that the check is the same on every machine.
 */
const runtimeTree = Object.entries(lock.packages)
  .filter(([path, entry]) => path !== '' && entry.dev !== true)
  .map(([path, entry]) => ({
    name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length),
    version: entry.version ?? '?',
    license: entry.license,
  }));

/** The licence column of docs/dependencies.md's runtime table, by package. */
function documentedLicences(): Map<string, string> {
  const table = page.split('## Runtime dependencies')[1]?.split('\n## ')[0] ?? '';
  return new Map([...table.matchAll(/^\| `([^`]+)` \| ([^|]+?) \|/gm)].map((m) => [m[1] as string, (m[2] as string).trim()]));
}

describe('licences', () => {
  it('ships Boomerang under Apache-2.0: the license field and the LICENSE file agree', () => {
    // Prepare
    const text = readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8');
    // Assess
    expect(packageJson.license).toBe('Apache-2.0');
    expect(text).toMatch(/^\s+Apache License\s+Version 2\.0, January 2004/);
    expect(text).toContain('END OF TERMS AND CONDITIONS');
  });

  it('finds the runtime tree in the lock (amqplib among them, no dev tool)', () => {
    // Assess: a lock without the dev marks would check the wrong tree
    const names = runtimeTree.map((p) => p.name);
    expect(names).toContain('amqplib');
    expect(names).not.toContain('vitest');
  });

  it.each(runtimeTree)('allows $name@$version ($license) in an Apache-2.0 package', ({ name, license }) => {
    // Assess
    expect(
      typeof license === 'string' && ALLOWED.has(license),
      `${name} is under ${JSON.stringify(license)}: read its terms before it joins the runtime tree, then add it to ALLOWED with the reason, or choose another package`,
    ).toBe(true);
  });

  it('documents each runtime dependency with the licence it declares', () => {
    // Prepare
    const documented = documentedLicences();
    // Act
    const declared = Object.keys(packageJson.dependencies).map((name) => [name, lock.packages[`node_modules/${name}`]?.license] as const);
    // Assess
    for (const [name, license] of declared) expect({ name, documented: documented.get(name) }).toEqual({ name, documented: license });
  });
});
