/**
 * amqplib's connection, for the native engine's rare 0-9-1 paths (an older broker's version, the
 * unconvertible sweep). In a native queue's bundle (shared/cdk/bundles.ts defines the delay mode) it
 * is loaded at its first use, so that amqplib stays out of the cold start; in every other bundle, where
 * the copy path loads amqplib anyway, it is the module loaded already, and no chunk is split off for it.
 *
 * The way that is not late sits in a module of its own (amqp091-now.ts): esbuild keeps a static import,
 * from a module it keeps, of a module that is also loaded late, which would put amqplib back in the
 * native bundle's start; a module nothing uses is left out, its imports with it.
 */
import type { connectFromConfig } from '../amqp/connect-from-config.js';
import { connectFromConfigNow } from './amqp091-now.js';

/** `connectFromConfig`, loaded when a native bundle first needs it. */
function connectFromConfigLate(): Promise<typeof connectFromConfig> {
  return process.env.BOOMERANG_BUNDLED_DELAY_MODE === 'native'
    ? import('../amqp/connect-from-config.js').then((loaded) => loaded.connectFromConfig)
    : connectFromConfigNow();
}

export { connectFromConfigLate };
