import { fileURLToPath } from 'node:url';

/**
 * The package's own name, read from its source (as tsconfig.json's `paths` do for tsc, tsx and esbuild):
 * a queue file in functions/ or a test's temporary folder imports 'boomerang-rabbitmq' as a team's does.
 * Exact matches only, so that `boomerang-rabbitmq/cdk` is not read as a folder of the entry point.
 */
const PACKAGE_ALIAS = [
  { find: /^boomerang-rabbitmq$/, replacement: fileURLToPath(new URL('../../shared/index.ts', import.meta.url)) },
  { find: /^boomerang-rabbitmq\/cdk$/, replacement: fileURLToPath(new URL('../../shared/cdk/index.ts', import.meta.url)) },
];

export { PACKAGE_ALIAS };
