// Times import() of Lambda bundles in fresh node processes, each pinned to one core (taskset -c 0) so
// that the loader's own threads do not spread the figure: a before-and-after of how a bundle is built.
// Usage: node test/bench/import-time.mjs <out.json> <rounds> <label>=<bundle index.mjs> [<label>=<...> ...]
// The bundles alternate round by round; the JSON holds every time and each label's median. Plain
// JavaScript, no loader in the way. Needs taskset (util-linux).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [out, rounds, ...pairs] = process.argv.slice(2);
if (out === undefined || !/^\d+$/.test(rounds ?? '') || pairs.length === 0 || pairs.some((p) => !p.includes('='))) {
  process.stderr.write('usage: node test/bench/import-time.mjs <out.json> <rounds> <label>=<bundle index.mjs> ...\n');
  process.exit(2);
}
const bundles = pairs.map((pair) => pair.split('=', 2));
const child = fileURLToPath(new URL('./import-time-child.mjs', import.meta.url));
const times = Object.fromEntries(bundles.map(([label]) => [label, []]));
for (let round = 0; round < Number(rounds); round++) {
  const order = round % 2 === 0 ? bundles : [...bundles].reverse();
  for (const [label, bundle] of order) {
    const ms = execFileSync('taskset', ['-c', '0', process.execPath, child, bundle], { env: { ...process.env, AWS_LAMBDA_FUNCTION_NAME: 'bench' } });
    times[label].push(Number(ms.toString().trim()));
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const result = {
  date: new Date().toISOString(),
  node: process.version,
  how: 'import() of each bundle in a fresh node process pinned to core 0, AWS_LAMBDA_FUNCTION_NAME set; bundles alternating round by round',
  bundles: Object.fromEntries(bundles.map(([label, bundle]) => [label, { bundle, ms: times[label], medianMs: median(times[label]) }])),
};
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
for (const [label] of bundles) process.stdout.write(`${label}: median ${median(times[label]).toFixed(1)} ms\n`);
