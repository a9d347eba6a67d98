// The static checks of `npm test` (type checks, import rules, lint and format, dead code), two at a
// time: each is one single-threaded process, and this machine has two cores. Each check's output is
// printed whole when it ends, with its time; the run fails, naming the failed checks, if any failed.
import { spawn } from 'node:child_process';

const CHECKS = [
  ['type check', 'tsc --noEmit'],
  ['dead code', 'npm run --silent knip'],
  ["type check of the console's page", 'tsc --noEmit -p shared/console/ui'],
  ['import rules', 'npm run --silent deps'],
  ['lint and format', 'npm run --silent lint'],
];
const AT_ONCE = 2;

function run([name, command]) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk) => {
      output += chunk;
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('close', (code) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(`=== ${name} (${command}): ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${seconds} s\n${output}`);
      resolve(code === 0 ? undefined : name);
    });
  });
}

const queue = [...CHECKS];
const failed = [];
await Promise.all(
  Array.from({ length: AT_ONCE }, async () => {
    for (let check = queue.shift(); check !== undefined; check = queue.shift()) {
      const name = await run(check);
      if (name !== undefined) failed.push(name);
    }
  }),
);
if (failed.length > 0) {
  process.stderr.write(`static checks failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
