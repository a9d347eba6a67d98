import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/invoke-child.js';

type LockPackage = { readonly version?: string; readonly hasInstallScript?: boolean };

const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockPackage> };

/**
 * Every locked package with an install script (preinstall, install, postinstall): npm writes
 * `hasInstallScript` into the lock for exactly the packages whose scripts npm 11 blocks and then warns
 * about. The lock, not `npm install-scripts ls`, because the lock is the same offline and on every
 * machine, whatever node_modules holds.
 */
const withScripts = Object.entries(lock.packages)
  .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
  .map(([path, entry]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), version: entry.version ?? '?' }));

describe('allowScripts in package.json', () => {
  it('finds the packages with install scripts in the lock (esbuild among them)', () => {
    // Assess: a lock format without the field would make the next test pass on nothing
    expect(withScripts.map((p) => p.name)).toContain('esbuild');
  });

  it.each(withScripts)('decides for $name@$version (true: its script runs, false: denied), so that npm ci warns about none', ({ name, version }) => {
    // Prepare
    const allow = packageJson.allowScripts ?? {};
    // Act: a name-only entry covers every version; a pinned one (name@x.y.z) that version only
    const decided = Object.hasOwn(allow, name) || Object.hasOwn(allow, `${name}@${version}`);
    // Assess
    expect(decided, `${name}@${version} has an install script: add it to allowScripts in package.json (npm install-scripts approve|deny ${name})`).toBe(true);
  });

  it('names no package that has no install script any more (npm install-scripts prune removes them)', () => {
    // Prepare
    const names = new Set(withScripts.map((p) => p.name));
    // Act
    const stale = Object.keys(packageJson.allowScripts ?? {}).filter((key) => !names.has(key.replace(/(?<=.)@[^@]*$/, '')));
    // Assess
    expect(stale).toEqual([]);
  });
});
