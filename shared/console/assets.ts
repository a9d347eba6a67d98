import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The front end as the server sends it: everything local, nothing from a CDN. */
type ConsoleAssets = { readonly html: string; readonly js: string; readonly css: string };

const UI = fileURLToPath(new URL('./ui/', import.meta.url));

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Boomerang console</title>
<link rel="stylesheet" href="/app.css">
</head>
<body>
<div id="app"><p>Loading…</p></div>
<script type="module" src="/app.js"></script>
</body>
</html>
`;

/**
 * Bundles the Preact front end with esbuild, in memory, when the console starts (about a second):
 * no build step to forget, no generated file in the repository.
 */
async function buildConsoleAssets(): Promise<ConsoleAssets> {
  const result = await build({
    entryPoints: [`${UI}main.tsx`],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2020',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const js = result.outputFiles[0]?.text ?? '';
  return { html: HTML, js, css: await readFile(`${UI}app.css`, 'utf8') };
}

export { buildConsoleAssets };
export type { ConsoleAssets };
