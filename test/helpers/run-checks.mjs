// The static checks of `npm test` (type checks, import rules, lint and format, dead code). Alone
// (`npm run check`) they run two at a time: each is one single-threaded process, and this machine has
// two cores. Given a command after `--` (`npm test`: vitest), they run one at a time beside it: the
// broker tests spend much of their time waiting on the broker, TTLs and timeouts, so the checks fill
// cores the tests leave idle instead of holding the tests back (they take 36 s one after another,
// 2026-11-29). The command's output streams as it comes; each check's output is printed whole, with
// its time, when it ends (after the command's when they ran beside it). The run fails, naming what
// failed, if anything failed.
import { spawn } from 'node:child_process';

const CHECKS = [
  ['type check', 'tsc --noEmit'],
  ['dead code', 'npm run --silent knip'],
  ["type check of the console's page", 'tsc --noEmit -p shared/console/ui'],
  ['import rules', 'npm run --silent deps'],
  ['lint and format', 'npm run --silent lint'],
];

const separator = process.argv.indexOf('--');
const beside = separator === -1 ? [] : process.argv.slice(separator + 1);
const atOnce = beside.length > 0 ? 1 : 2;
const reports = [];

function check([name, command]) {
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
      const report = `=== ${name} (${command}): ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${seconds} s\n${output}`;
      if (beside.length > 0) reports.push(report);
      else process.stdout.write(report);
      resolve(code === 0 ? undefined : name);
    });
  });
}

function runBeside([command, ...args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit' });
    child.on('close', (code) => resolve(code === 0 ? undefined : `${[command, ...args].join(' ')} (exit ${code})`));
  });
}

const queue = [...CHECKS];
const failed = [];
const checking = Promise.all(
  Array.from({ length: atOnce }, async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const name = await check(next);
      if (name !== undefined) failed.push(name);
    }
  }),
);
const besideFailed = beside.length > 0 ? await runBeside(beside) : undefined;
await checking;
if (reports.length > 0) process.stdout.write(`\nStatic checks, run beside the tests:\n${reports.join('')}`);
if (besideFailed !== undefined) failed.push(besideFailed);
if (failed.length > 0) {
  process.stderr.write(`failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
