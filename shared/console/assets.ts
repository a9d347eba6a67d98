import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

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

/** The page's script and styles as the package ships them: built by `bundleConsolePage` into ui/ next to the compiled console. */
const PREBUILT = { js: `${UI}app.js`, css: `${UI}app.css` } as const;

/**
 * The front end: the package's prebuilt page (npm run build:package wrote ui/app.js), or, from the
 * repository's source, the Preact page bundled with esbuild in memory when the console starts (about a
 * second): no build step to forget, no generated file in the repository.
 */
async function buildConsoleAssets(): Promise<ConsoleAssets> {
  const prebuilt = await readFile(PREBUILT.js, 'utf8').catch(() => undefined);
  const js = prebuilt ?? (await bundleConsolePage());
  return { html: HTML, js, css: await readFile(PREBUILT.css, 'utf8') };
}

/** The page's script: main.tsx and Preact, bundled and minified. esbuild is loaded only here, so an installed package never needs it for the console. */
async function bundleConsolePage(): Promise<string> {
  const { build } = await import('esbuild');
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
  return result.outputFiles[0]?.text ?? '';
}

export { buildConsoleAssets, bundleConsolePage };
export type { ConsoleAssets };
