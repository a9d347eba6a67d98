import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { pruneAmqpCodec, SENT_BY_BOTH, SENT_BY_CLIENT_ONLY, SENT_BY_SERVER_ONLY } from '../../infra/amqp-codec-prune.js';

// amqplib's `exports` hides lib/defs.js from require.resolve: take the path the bundler reads.
const DEFS_PATH = fileURLToPath(new URL('../../node_modules/amqplib/lib/defs.js', import.meta.url));
const SOURCE = readFileSync(DEFS_PATH, 'utf8');

type Codec = {
  encodeMethod(id: number, channel: number, fields: Record<string, unknown>): Buffer;
  decode(id: number, args: Buffer): Record<string, unknown>;
  encodeProperties(id: number, channel: number, size: number, fields: Record<string, unknown>): Buffer;
  info(id: number): { readonly name: string; readonly args: readonly { readonly type: string; readonly name: string }[] };
  [name: string]: unknown;
};

/** Runs codec source as amqplib would: CommonJS, its `./codec` and `./bitset` from amqplib itself. */
function load(source: string): Codec {
  const module = { exports: {} as Codec };
  const requireFromDefs = createRequire(DEFS_PATH);
  new Function('module', 'exports', 'require', source)(module, module.exports, requireFromDefs);
  return module.exports;
}

const real = load(SOURCE);
const pruned = load(pruneAmqpCodec(SOURCE));

/** A value of each AMQP field type that survives a round trip. */
const SAMPLES: Record<string, unknown> = {
  octet: 7,
  short: 300,
  long: 70_000,
  longlong: 5_000_000,
  shortstr: 'boomerang',
  longstr: Buffer.from('PLAIN'),
  bit: true,
  table: { product: 'boomerang', n: 3 },
  timestamp: 1_700_000_000,
};

/** Sample fields for `name`, and the method's arguments as its frame carries them. */
function frameOf(codec: Codec, name: string): { id: number; args: Buffer; fields: Record<string, unknown> } {
  const id = codec[name] as number;
  const fields = Object.fromEntries(codec.info(id).args.map((a) => [a.name, SAMPLES[a.type]]));
  const frame = codec.encodeMethod(id, 1, fields);
  // Frame: type (1), channel (2), size (4), class and method ids (4), arguments, frame end (1).
  return { id, args: frame.subarray(11, frame.length - 1), fields };
}

const METHODS = [...SENT_BY_SERVER_ONLY, ...SENT_BY_CLIENT_ONLY, ...SENT_BY_BOTH].filter((m) => m !== 'BasicProperties');

describe('pruneAmqpCodec', () => {
  it('classifies every method of the installed amqplib exactly once', () => {
    // Prepare
    const all = [...SENT_BY_SERVER_ONLY, ...SENT_BY_CLIENT_ONLY, ...SENT_BY_BOTH];
    // Assess
    expect(new Set(all).size).toBe(all.length);
    expect(() => pruneAmqpCodec(SOURCE)).not.toThrow();
  });

  it('takes a good part off the minified codec', () => {
    const minified = (source: string): number => transformSync(source, { minify: true, loader: 'js' }).code.length;
    expect(minified(pruneAmqpCodec(SOURCE))).toBeLessThan(minified(SOURCE) * 0.85);
  });

  it.each([...SENT_BY_CLIENT_ONLY, ...SENT_BY_BOTH.filter((m) => m !== 'BasicProperties')])('keeps the encoder of %s, byte for byte', (name) => {
    // Prepare
    const id = real[name] as number;
    const { fields } = frameOf(real, name);
    // Act, Assess
    expect(pruned.encodeMethod(id, 1, fields)).toEqual(real.encodeMethod(id, 1, fields));
  });

  it.each([...SENT_BY_SERVER_ONLY, ...SENT_BY_BOTH.filter((m) => m !== 'BasicProperties')])('keeps the decoder of %s, field for field', (name) => {
    // Prepare
    const { id, args } = frameOf(real, name);
    // Act, Assess
    expect(pruned.decode(id, args)).toEqual(real.decode(id, args));
  });

  it('keeps the content header both ways', () => {
    // Prepare
    const properties = { contentType: 'application/json', headers: { 'x-retry-no': 2 }, deliveryMode: 2, messageId: 'm-1', timestamp: 1_700_000_000 };
    const frame = real.encodeProperties(60, 1, 1024, properties);
    // Act, Assess
    expect(pruned.encodeProperties(60, 1, 1024, properties)).toEqual(frame);
    // Content header frame: type, channel, size (7), class id (2), weight (2), body size (8), then flags and properties.
    const flagsAndFields = frame.subarray(19, frame.length - 1);
    expect(pruned.decode(60, flagsAndFields)).toEqual(real.decode(60, flagsAndFields));
    expect(pruned.decode(60, flagsAndFields)).toMatchObject({ messageId: 'm-1', headers: { 'x-retry-no': 2 } });
  });

  it.each(SENT_BY_SERVER_ONLY)('drops the encoder of %s with an error that names it', (name) => {
    const id = real[name] as number;
    expect(() => pruned.encodeMethod(id, 1, {})).toThrow(`amqplib encode ${name} was left out of this bundle`);
  });

  it.each(SENT_BY_CLIENT_ONLY)('drops the decoder of %s with an error that names it', (name) => {
    const { id, args } = frameOf(real, name);
    expect(() => pruned.decode(id, args)).toThrow(`amqplib decode ${name} was left out of this bundle`);
  });

  it('refuses an amqplib whose codec has a method it does not classify, naming it', () => {
    // Prepare
    const extra = `${SOURCE}\nfunction encodeBasicTeleport(channel, fields) {\n  return 1;\n}\n`;
    // Act, Assess
    expect(() => pruneAmqpCodec(extra)).toThrow('not classified: BasicTeleport');
  });

  it('refuses an amqplib whose codec lacks a method it names', () => {
    const without = SOURCE.replace(/^function (encode|decode)TxSelect\(/gm, 'function $1TxSelected(');
    expect(() => pruneAmqpCodec(without)).toThrow(/not classified: TxSelected; not found: TxSelect\b/);
  });

  it('covers every method amqplib defines (METHODS matches its method ids)', () => {
    const ids = METHODS.map((m) => real[m]);
    expect(ids.every((id) => typeof id === 'number')).toBe(true);
  });
});
