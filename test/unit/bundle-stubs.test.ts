import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { resolveStubs, STUBBED_FILES, STUBS, stubModulesPlugin } from '../../infra/bundle-stubs.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RECOVERY = 'node_modules/amqplib/lib/recovery.js';
const CHANNEL_WRAPPER = 'node_modules/amqp-connection-manager/dist/esm/ChannelWrapper.js';
const AMQPLIB_PACKAGE = 'node_modules/amqplib/package.json';
const AMQPLIB_CODEC = 'node_modules/amqplib/lib/defs.js';

/** A stub's source for the real file under ROOT. */
function stubSource(file: string): string {
  const stub = STUBS.find((s) => s.file === file);
  if (!stub) throw new Error(`no stub for ${file}`);
  return stub.contents(join(ROOT, file));
}

/** Runs a stub as CommonJS (ESM stubs converted by esbuild) and returns its exports. */
function loadStub(file: string): Record<string, unknown> {
  const { code } = transformSync(stubSource(file), { format: 'cjs', loader: 'js' });
  const module = { exports: {} as Record<string, unknown> };
  new Function('module', 'exports', code)(module, module.exports);
  return module.exports;
}

/** Bundles `contents` as if it sat in `dir` (relative to ROOT), with the plugin; returns the metafile's inputs and the code. */
async function bundleFrom(dir: string, contents: string, root = ROOT) {
  const result = await build({
    absWorkingDir: ROOT,
    stdin: { contents, resolveDir: join(ROOT, dir), loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [stubModulesPlugin(root)],
  });
  return { inputs: result.metafile.inputs, code: result.outputFiles[0]?.text ?? '' };
}

describe('resolveStubs', () => {
  it('finds every stubbed file in node_modules today', () => {
    // Act
    const stubs = resolveStubs(ROOT);
    // Assess
    expect(STUBBED_FILES).toEqual([RECOVERY, CHANNEL_WRAPPER, AMQPLIB_PACKAGE, AMQPLIB_CODEC]);
    expect(stubs.size).toBe(STUBBED_FILES.length);
    for (const path of stubs.keys()) expect(existsSync(path), path).toBe(true);
  });

  it('names the missing file when a stubbed file is not where expected', async () => {
    // Prepare
    const emptyRoot = await mkdtemp(join(tmpdir(), 'boomerang-stubs-'));
    try {
      // Act / Assess
      expect(() => resolveStubs(emptyRoot)).toThrow(`Cannot stub ${RECOVERY} out of the Lambda bundles: no such file under ${emptyRoot}`);
    } finally {
      await rm(emptyRoot, { recursive: true, force: true });
    }
  });
});

describe('stubModulesPlugin', () => {
  it.each([
    ['node_modules/amqplib', "require('./lib/recovery')", RECOVERY],
    ['node_modules/amqplib', "require('./lib/recovery.js')", RECOVERY],
    ['node_modules/amqplib/lib', "require('../package.json')", AMQPLIB_PACKAGE],
    ['node_modules/amqp-connection-manager/dist/esm', "export { default } from './ChannelWrapper.js'", CHANNEL_WRAPPER],
  ])('from %s, %s loads the stub of %s', async (dir, contents, file) => {
    // Act
    const { inputs, code } = await bundleFrom(dir, contents);
    // Assess
    expect(Object.keys(inputs)).toContain(file);
    expect(inputs[file]?.bytes).toBe(Buffer.byteLength(stubSource(file)));
    expect(code).not.toContain('RecoveringPromiseModel');
  });

  it('stubs all three in a bundle of amqplib and amqp-connection-manager', async () => {
    // Act
    const { inputs, code } = await bundleFrom('.', "export { connect } from 'amqplib'; export { AmqpConnectionManagerClass } from 'amqp-connection-manager';");
    // Assess
    for (const file of STUBBED_FILES) expect(inputs[file]?.bytes, file).toBe(Buffer.byteLength(stubSource(file)));
    expect(code).not.toContain('An AMQP 0-9-1'); // amqplib's package.json description
  });

  it('fails the build, naming the file, when a stubbed file is missing', async () => {
    // Prepare
    const emptyRoot = await mkdtemp(join(tmpdir(), 'boomerang-stubs-'));
    try {
      // Act / Assess
      await expect(bundleFrom('.', "export { connect } from 'amqplib';", emptyRoot)).rejects.toThrow(`Cannot stub ${RECOVERY}`);
    } finally {
      await rm(emptyRoot, { recursive: true, force: true });
    }
  });
});

describe('the amqplib/lib/recovery.js stub', () => {
  it('exports everything amqplib/channel_api.js calls on it', async () => {
    // Prepare
    const channelApi = await readFile(join(ROOT, 'node_modules/amqplib/channel_api.js'), 'utf8');
    const called = [...new Set([...channelApi.matchAll(/\brecovery\.(\w+)\(/g)].map((m) => m[1]))];
    // Act
    const stub = loadStub(RECOVERY);
    // Assess
    expect(called).toContain('splitConnectionOptions');
    for (const name of called) expect(typeof stub[name as string], `recovery.${name}`).toBe('function');
  });

  it.each([undefined, null, {}, { heartbeat: 5, clientProperties: { connection_name: 'x' } }])('passes %j through without recovery', (options) => {
    // Prepare
    const stub = loadStub(RECOVERY) as { splitConnectionOptions: (o: unknown) => unknown; recoveryEnabled: (r: unknown) => boolean };
    // Act
    const split = stub.splitConnectionOptions(options);
    // Assess
    expect(split).toEqual({ connectionOptions: options, recovery: null });
    expect((split as { connectionOptions: unknown }).connectionOptions).toBe(options);
    expect(stub.recoveryEnabled(null)).toBe(false);
  });

  it.each([
    [true, 'recovery: true'],
    [false, 'recovery: false'],
    [{ maxRetries: 3 }, 'recovery: an object'],
  ])('throws, naming the option, when recovery is %j', (recovery, got) => {
    // Prepare
    const stub = loadStub(RECOVERY) as { splitConnectionOptions: (o: unknown) => unknown };
    // Act / Assess
    expect(() => stub.splitConnectionOptions({ recovery })).toThrow(`the \`recovery\` option (got ${got}) is not available, because amqplib/lib/recovery.js was left out of the Lambda bundle`);
  });
});

describe('the amqp-connection-manager ChannelWrapper stub', () => {
  it('is imported only as the default export of AmqpConnectionManager.js', async () => {
    // Prepare
    const dist = join(ROOT, 'node_modules/amqp-connection-manager/dist/esm');
    const manager = await readFile(join(dist, 'AmqpConnectionManager.js'), 'utf8');
    const index = await readFile(join(dist, 'index.js'), 'utf8');
    // Assess
    expect(manager.match(/^import .*ChannelWrapper.*$/gm)).toEqual(["import ChannelWrapper from './ChannelWrapper.js';"]);
    expect(index).not.toContain('ChannelWrapper');
  });

  it('throws, naming the missing call, when constructed', () => {
    // Prepare
    const ChannelWrapper = loadStub(CHANNEL_WRAPPER).default as new () => unknown;
    // Act / Assess
    expect(() => new ChannelWrapper()).toThrow('AmqpConnectionManager.createChannel() is not available, because amqp-connection-manager/dist/esm/ChannelWrapper.js was left out of the Lambda bundle');
  });
});

describe('the amqplib/package.json stub', () => {
  it('keeps only the real version', async () => {
    // Prepare
    const real = JSON.parse(await readFile(join(ROOT, AMQPLIB_PACKAGE), 'utf8')) as { version: string };
    // Act / Assess
    expect(JSON.parse(stubSource(AMQPLIB_PACKAGE))).toEqual({ version: real.version });
  });
});
