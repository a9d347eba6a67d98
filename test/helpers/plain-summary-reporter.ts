import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints one plain closing line, `N passed, N failed, N skipped`, after vitest's own output: the
 * form CI reads to tell a run that tested something from one that ran no test. A file that failed
 * outside its tests (its broker did not answer when it loaded, say) counts as one failure: its tests
 * never ran, and the line must not read as a clean run.
 */
class PlainSummaryReporter implements Reporter {
  public onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      if (module.errors().length > 0) failed++;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

export { PlainSummaryReporter };
