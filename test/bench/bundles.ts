import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/invoke-child.js';

/** The Lambda bundles `npm run build` makes (infra/build.ts). */
const BUNDLES = { pull: join(REPO_ROOT, 'dist/pull/index.mjs'), event: join(REPO_ROOT, 'dist/event/index.mjs') } as const;

/**
 * Builds the bundles with `npm run build` when one is missing and the build script exists. Returns
 * undefined when both exist, else why they do not (the caller reports "not measured yet").
 */
function ensureBundles(progress: (line: string) => void): string | undefined {
  if (Object.values(BUNDLES).every((b) => existsSync(b))) return undefined;
  if (!existsSync(join(REPO_ROOT, 'infra/build.ts'))) return 'not measured yet: no dist/ bundles and no build script (infra/build.ts)';
  progress('  dist/ bundles missing: running npm run build');
  try {
    execFileSync('npm', ['run', '-s', 'build'], { cwd: REPO_ROOT, stdio: 'pipe' });
  } catch (error) {
    return `not measured yet: npm run build failed (${(error as Error).message.split('\n')[0]})`;
  }
  return undefined;
}

export { BUNDLES, ensureBundles };
