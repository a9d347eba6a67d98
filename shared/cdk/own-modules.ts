/**
 * Where the package's own modules are, found from the module asking: in this repository they are the
 * TypeScript sources (shared/cdk/*.ts, run by tsx or vitest), in an installed package the compiled
 * JavaScript (dist/package/shared/cdk/*.js). The construct hands such paths to a child process and to
 * esbuild, which need real files, not specifiers.
 */
import { fileURLToPath } from 'node:url';

/**
 * The absolute path of the package module `path` (relative, without extension) seen from `from` (the
 * caller's `import.meta.url`), with the caller's own extension.
 * @example ownModule(import.meta.url, '../parked/retention-function') // …/shared/parked/retention-function.ts, or .js when compiled
 */
function ownModule(from: string, path: string): string {
  const extension = /\.[cm]?[jt]s$/.exec(new URL(from).pathname)?.[0] ?? '.js';
  return fileURLToPath(new URL(`${path}${extension}`, from));
}

export { ownModule };
