import { randomUUID } from 'node:crypto';
import type { WalkCounts } from '../parked/walk.js';

/** A state-changing action the console runs in the background, polled by the browser for live progress. */
type Job = {
  readonly id: string;
  /** `replay`, `purge` or `edit-replay`. */
  readonly kind: string;
  /** What it acts on, in words: `group "PartnerDown|HTTP <n>|orders" of orders.parked`. */
  readonly label: string;
  state: 'running' | 'done' | 'failed';
  counts: Readonly<WalkCounts> | null;
  /** The action's result once done (counts per queue...). */
  result: unknown;
  /** The error's name and message when it failed. */
  error: string | null;
};

/** Jobs kept for the browser to read; older finished ones are forgotten first. */
const MAX_JOBS = 100;

/** The console's background actions, by id. */
class JobRegistry {
  private readonly jobs = new Map<string, Job>();

  /**
   * Starts `run` and returns its job at once; `run` reports walk counts through `onCounts`.
   * A failure is recorded on the job, never thrown (nothing is lost: the walk keeps unsettled messages parked).
   */
  public start(kind: string, label: string, run: (onCounts: (counts: Readonly<WalkCounts>) => void) => Promise<unknown>): Job {
    const job: Job = { id: randomUUID(), kind, label, state: 'running', counts: null, result: null, error: null };
    this.jobs.set(job.id, job);
    this.forgetOld();
    void run((counts) => {
      job.counts = { ...counts };
    }).then(
      (result) => {
        job.result = result;
        job.state = 'done';
      },
      (error: unknown) => {
        job.error = `${(error as Error).name}: ${(error as Error).message}`;
        job.state = 'failed';
      },
    );
    return job;
  }

  public get(id: string): Job | undefined {
    return this.jobs.get(id);
  }

  /** Resolves when every running job has ended (for shutdown and tests). */
  public async idle(): Promise<void> {
    while ([...this.jobs.values()].some((job) => job.state === 'running')) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  private forgetOld(): void {
    for (const [id, job] of this.jobs) {
      if (this.jobs.size <= MAX_JOBS) return;
      if (job.state !== 'running') this.jobs.delete(id);
    }
  }
}

export { JobRegistry };
export type { Job };
