import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './invoke-child.js';

/** Where the fault scenarios leave their figures (git-ignored), one JSON file per scenario. */
const FAULT_RESULTS_DIR = join(REPO_ROOT, 'bench-results', 'faults');

/** Prints a scenario's figures and writes them to bench-results/faults/<name>.json for the README. */
function reportFault(name: string, figures: Record<string, unknown>): void {
  const entry = { scenario: name, at: new Date().toISOString(), ...figures };
  mkdirSync(FAULT_RESULTS_DIR, { recursive: true });
  writeFileSync(join(FAULT_RESULTS_DIR, `${name}.json`), `${JSON.stringify(entry, null, 2)}\n`);
  console.log(`[fault] ${name}: ${JSON.stringify(figures)}`);
}

export { FAULT_RESULTS_DIR, reportFault };
