/**
 * Build-time stand-ins for dependency code the Lambda functions reach through `require`/`import` but
 * never run: an esbuild plugin gives each file other contents (a tiny stand-in, or for amqplib's
 * protocol codec the real file without the halves a client never runs), so that code costs bytes in
 * no bundle. node_modules is not touched; tests and the CLIs still run the real modules.
 *
 * Each stand-in keeps the real module's exports that its importer calls, and throws an error that
 * names the option or call and where it was left out if that code is ever needed after all.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Loader, Plugin } from 'esbuild';
import { pruneAmqpCodec } from './amqp-codec-prune.js';

type ModuleStub = {
  /** The replaced file, relative to the repository root, with `/` separators. */
  readonly file: string;
  readonly loader: Loader;
  /** The stand-in's source; `realFile` is the absolute path of the file it stands in for. */
  readonly contents: (realFile: string) => string;
};

// The stub bodies are plain JS and short: only what the importer calls, plus errors that say where to look.
const RECOVERY_STUB = `'use strict';
// Stand-in for amqplib/lib/recovery.js in Boomerang's Lambda bundles (infra/bundle-stubs.ts).
function leftOut(got) {
  return new Error('amqplib connect(): the \`recovery\` option (got ' + got + ') is not available, because ' +
    'amqplib/lib/recovery.js was left out of the Lambda bundle (infra/bundle-stubs.ts, used by infra/bundles.ts). ' +
    'Connect without \`recovery\`, or remove its stub to bundle the real module.');
}
function splitConnectionOptions(options) {
  if (options !== null && typeof options === 'object' && Object.hasOwn(options, 'recovery')) {
    const value = options.recovery;
    throw leftOut('recovery: ' + (typeof value === 'object' && value !== null ? 'an object' : String(value)));
  }
  return { connectionOptions: options, recovery: null };
}
function connectWithRecovery() {
  throw leftOut('a recovery connect');
}
module.exports = {
  splitConnectionOptions,
  recoveryEnabled: () => false,
  connectWithRecoveryPromise: connectWithRecovery,
  connectWithRecoveryCallback: connectWithRecovery,
};
`;

const CHANNEL_WRAPPER_STUB = `// Stand-in for amqp-connection-manager/dist/esm/ChannelWrapper.js in Boomerang's Lambda bundles (infra/bundle-stubs.ts).
export default class ChannelWrapper {
  constructor() {
    throw new Error('AmqpConnectionManager.createChannel() is not available, because ' +
      'amqp-connection-manager/dist/esm/ChannelWrapper.js was left out of the Lambda bundle ' +
      '(infra/bundle-stubs.ts, used by infra/bundles.ts). Open channels on the amqplib connection ' +
      '(shared/amqp/connection.ts), or remove the stub to bundle the real module.');
  }
}
`;

/** The stubbed modules, each with why Boomerang never needs the real one. */
const STUBS: readonly ModuleStub[] = [
  // amqplib's channel_api.js requires it for the optional `recovery` connect option (auto-reconnect);
  // Boomerang never passes it: amqp-connection-manager does the failover (shared/amqp/connection.ts).
  { file: 'node_modules/amqplib/lib/recovery.js', loader: 'js', contents: () => RECOVERY_STUB },
  // Only AmqpConnectionManager.createChannel() constructs it; Boomerang opens its channels on the raw
  // amqplib connection instead.
  { file: 'node_modules/amqp-connection-manager/dist/esm/ChannelWrapper.js', loader: 'js', contents: () => CHANNEL_WRAPPER_STUB },
  // lib/connect.js reads only `.version` (sent to the broker in the client properties); the rest
  // (scripts, devDependencies, keywords) would ride along in every bundle.
  { file: 'node_modules/amqplib/package.json', loader: 'json', contents: (realFile) => JSON.stringify({ version: versionOf(realFile) }) },
  // The protocol codec without the halves a client never runs (see infra/amqp-codec-prune.ts).
  { file: 'node_modules/amqplib/lib/defs.js', loader: 'js', contents: (realFile) => pruneAmqpCodec(readFileSync(realFile, 'utf8')) },
];

/** The stubbed files, relative to the repository root. */
const STUBBED_FILES: readonly string[] = STUBS.map((s) => s.file);

function versionOf(packageJson: string): string {
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: unknown };
  if (typeof version !== 'string') throw new Error(`${packageJson} has no string "version" to keep in the bundle; got ${JSON.stringify(version)}`);
  return version;
}

/**
 * Each stub by the real path of the file it replaces, the way esbuild names a resolved module (symlinks
 * followed, native separators), so `require('./recovery')` and `require('./recovery.js')` both match.
 * Throws, naming the file, when one is missing: a dependency upgrade moved it, and the stub may no longer
 * fit what imports it.
 */
function resolveStubs(root: string): Map<string, ModuleStub> {
  const byPath = new Map<string, ModuleStub>();
  for (const stub of STUBS) {
    let realFile: string;
    try {
      realFile = realpathSync(join(root, stub.file));
    } catch (error) {
      throw new Error(`Cannot stub ${stub.file} out of the Lambda bundles: no such file under ${root} (did a dependency upgrade move it?). Check its importer still needs only what infra/bundle-stubs.ts provides, then update the stub's path.`, { cause: error });
    }
    byPath.set(realFile, stub);
  }
  return byPath;
}

/** Only file names that some stub replaces reach the plugin's callback (esbuild filters in Go). */
const STUB_FILTER = new RegExp(`[\\\\/](?:${[...new Set(STUBS.map((s) => basename(s.file)))].map((n) => n.replace(/[.]/g, '\\.')).join('|')})$`);

/**
 * The esbuild plugin that loads each stub instead of its real file under `root`. Fails the build,
 * naming the file, when a stubbed file is not where expected.
 * @example await build({ entryPoints: ['functions/pull.ts'], bundle: true, plugins: [stubModulesPlugin(root)] });
 */
function stubModulesPlugin(root: string): Plugin {
  return {
    name: 'boomerang-stub-modules',
    setup(build) {
      const stubs = resolveStubs(root);
      build.onLoad({ filter: STUB_FILTER }, (args) => {
        const stub = args.namespace === 'file' ? stubs.get(args.path) : undefined;
        // undefined: another package's file of the same name, which esbuild loads as usual.
        return stub && { contents: stub.contents(args.path), loader: stub.loader };
      });
    },
  };
}

export { resolveStubs, STUBBED_FILES, STUBS, stubModulesPlugin };
export type { ModuleStub };
