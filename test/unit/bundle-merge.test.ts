import type { Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { startChunks } from '../../shared/cdk/bundle-merge.js';

/** A metafile output with these imports (sizes and inputs do not matter here). */
function output(imports: Array<[string, 'import-statement' | 'dynamic-import']>): Metafile['outputs'][string] {
  return { bytes: 1, inputs: {}, exports: [], imports: imports.map(([path, kind]) => ({ path, kind })) };
}

describe('Function: startChunks', () => {
  it.each([
    {
      case: 'static imports, to any depth, are loaded with index.mjs',
      outputs: {
        'dist/q/index.mjs': output([['dist/q/chunks/chunk-a.mjs', 'import-statement']]),
        'dist/q/chunks/chunk-a.mjs': output([['dist/q/chunks/chunk-b.mjs', 'import-statement']]),
        'dist/q/chunks/chunk-b.mjs': output([]),
      },
      expected: ['dist/q/chunks/chunk-a.mjs', 'dist/q/chunks/chunk-b.mjs'],
    },
    {
      case: 'a chunk reached through import() is loaded on first use, and so is what only it imports',
      outputs: {
        'dist/q/index.mjs': output([
          ['dist/q/chunks/chunk-a.mjs', 'import-statement'],
          ['dist/q/chunks/guard.mjs', 'dynamic-import'],
        ]),
        'dist/q/chunks/chunk-a.mjs': output([['dist/q/chunks/rhea.mjs', 'dynamic-import']]),
        'dist/q/chunks/guard.mjs': output([
          ['dist/q/chunks/chunk-a.mjs', 'import-statement'],
          ['dist/q/chunks/chunk-c.mjs', 'import-statement'],
        ]),
        'dist/q/chunks/rhea.mjs': output([]),
        'dist/q/chunks/chunk-c.mjs': output([]),
      },
      expected: ['dist/q/chunks/chunk-a.mjs'],
    },
    {
      case: 'a package left to the runtime is no chunk',
      outputs: { 'dist/q/index.mjs': output([['@aws-sdk/client-secrets-manager', 'import-statement']]) },
      expected: [],
    },
    {
      case: 'an import cycle between chunks is followed once',
      outputs: {
        'dist/q/index.mjs': output([['dist/q/chunks/chunk-a.mjs', 'import-statement']]),
        'dist/q/chunks/chunk-a.mjs': output([['dist/q/chunks/chunk-b.mjs', 'import-statement']]),
        'dist/q/chunks/chunk-b.mjs': output([['dist/q/chunks/chunk-a.mjs', 'import-statement']]),
      },
      expected: ['dist/q/chunks/chunk-a.mjs', 'dist/q/chunks/chunk-b.mjs'],
    },
  ])('$case', ({ outputs, expected }) => {
    // Act
    const chunks = startChunks({ inputs: {}, outputs: outputs as unknown as Metafile['outputs'] }, 'dist/q/index.mjs');
    // Assess
    expect(chunks).toEqual(expected);
  });
});
