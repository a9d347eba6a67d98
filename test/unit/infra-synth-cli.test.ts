import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { synth } from '../../infra/synth-command.js';
import { type CliRun, callInProcess } from '../helpers/boomerang-cli.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A limit, not a measurement: tsx loading aws-cdk-lib took up to 20 s of wall time on the loaded 2-core machine. */
const CLI_TIMEOUT_MS = 90_000;

/** Runs `npm run synth -- <args>` in this process: what the script runs, with its output and exit code captured. */
function synthCall(args: readonly string[]): Promise<CliRun> {
  return callInProcess(() => synth([...args]), { env: { ...process.env }, cwd: REPO_ROOT });
}

/** Runs `npm run synth -- <args>` the way npm does (tsx), without npm; resolves with its exit code and output. */
function synthProcess(args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'infra/synth.ts', ...args], { cwd: REPO_ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

describe('npm run synth with bad context or a bad functionEnvironment', () => {
  it.each([
    [
      ['-c', 'workQueue=orders'],
      'ConfigError: The context key "workQueue" is gone: the stack deploys every queue declared in functions/, and each queue sets this as workQueue in defineQueue in its functions/<name>.ts',
    ],
    [['-c', 'stackname=orders'], 'ConfigError: Unknown context key "stackname" (did you mean stackName? keys are case-sensitive)'],
    [
      ['-c', 'functionEnvironment={"CONNECT_TIMEOUT_MS":"abc"}'],
      'ConfigError: functionEnvironment: CONNECT_TIMEOUT_MS must be an integer from 100 to 120000; got "abc"',
    ],
    [
      ['-c', 'createBroker=true', '-c', 'brokerEngineVersion=4.2'],
      'ConfigError: brokerInstanceType mq.t3.micro (the default brokerInstanceType) cannot run brokerEngineVersion 4.2',
    ],
  ])(
    '%j exits 1 with the message, no stack trace, before building anything',
    async (args, message) => {
      // Act
      const result = await synthCall(args);
      // Assess
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(message);
      expect(result.stderr).not.toMatch(/^\s+at /m);
      // The construct bundles after the checks (CDK says "Bundling asset ...", the report names index.mjs).
      expect(result.stderr).not.toContain('Bundling asset');
      expect(result.stderr).not.toContain('index.mjs');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits 1 with the message and no stack trace as its own process (node + tsx), as npm runs it',
    async () => {
      // Act
      const result = await synthProcess(['-c', 'stackname=orders']);
      // Assess
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('ConfigError: Unknown context key "stackname" (did you mean stackName? keys are case-sensitive)');
      expect(result.stderr).not.toMatch(/^\s+at /m);
    },
    CLI_TIMEOUT_MS,
  );
});
