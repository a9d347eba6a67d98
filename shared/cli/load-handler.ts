import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../errors.js';
import type { Handler } from '../message/message.js';

/**
 * Imports a handler module by path: its `handle` export, or its default export. The error says what
 * the module exports instead, so a typo in the export name is found at once.
 */
async function loadHandler(modulePath: string): Promise<Handler> {
  const absolute = resolve(modulePath);
  if (!existsSync(absolute)) throw new ConfigError(`--handler ${modulePath}: no such file (looked at ${absolute})`);
  const module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  const candidate = module.handle ?? module.default;
  if (typeof candidate !== 'function') {
    const exported = Object.keys(module).join(', ') || 'nothing';
    throw new ConfigError(`--handler ${modulePath} must export a function \`handle(message, context)\` or a default function; it exports: ${exported}`);
  }
  return candidate as Handler;
}

export { loadHandler };
