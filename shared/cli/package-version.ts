import { readFileSync } from 'node:fs';

const PACKAGE_NAME = 'boomerang-rabbitmq';

/**
 * The package's version, from the first package.json named `boomerang-rabbitmq` above `moduleUrl`:
 * two folders up from the source (shared/cli/), four from the compiled dist/package/shared/cli/,
 * installed or not.
 * @example packageVersion() // '0.2.0'
 */
function packageVersion(moduleUrl: string = import.meta.url): string {
  for (let dir = new URL('./', moduleUrl); ; dir = new URL('../', dir)) {
    const manifest = readManifest(new URL('package.json', dir));
    if (manifest?.name === PACKAGE_NAME && typeof manifest.version === 'string') return manifest.version;
    if (new URL('../', dir).href === dir.href) throw new Error(`no package.json of ${PACKAGE_NAME} above ${moduleUrl}`);
  }
}

/** The manifest at `url`, or undefined when there is none (or it is not JSON). */
function readManifest(url: URL): { readonly name?: unknown; readonly version?: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(url, 'utf8')) as { readonly name?: unknown; readonly version?: unknown };
  } catch {
    return undefined;
  }
}

export { packageVersion };
