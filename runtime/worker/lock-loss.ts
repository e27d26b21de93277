import { ErrorCode } from "bullmq";
import type { WorkerLog } from "../tracing/logger.js";

/**
 * A job that outlived its BullMQ lock (`STEPWISE_LOCK_MS`, 3 s): its worker could
 * not renew the lock in time, so BullMQ handed the job to another worker, and the
 * first one's renewal or completion is then refused. It happens when a process
 * holds more jobs than it can run within the lock (a high `STEPWISE_CONCURRENCY`
 * times the shards it serves, under a surge) or its event loop stops for longer.
 *
 * Nothing is lost or done twice that matters: a transition's commit is fenced by
 * the run's seq (the second runner's commit is refused as stale) and a task call
 * repeats with its operation key. Logged one by one, a surge printed hundreds of
 * BullMQ errors per second; this counts them and says once per window what they
 * mean and what to change.
 */

/** BullMQ's refusals that follow a lost lock (bullmq finished-errors.js codes). */
const AFTER_LOST_LOCK: ReadonlySet<number> = new Set([
  ErrorCode.JobLockNotExist,
  ErrorCode.JobLockMismatch,
  // Gone or moved on: the worker that took it over has finished it already (or it was removed).
  ErrorCode.JobNotExist,
  ErrorCode.JobNotInState,
]);

/** The lock manager's own complaint carries no code (bullmq lock-manager.js). */
const RENEWAL_REFUSED = /^could not renew lock for job (.+)$/;

/** The job a lost-lock error names (bullmq finished-errors.js, lock-manager.js): one job may give several. */
const JOB_NAMED = [
  RENEWAL_REFUSED,
  /^(?:Missing lock|Lock mismatch|Missing key) for job (.+?)\. /,
  /^Job (.+?) is not in the /,
];

function jobOf(err: Error): string {
  for (const pattern of JOB_NAMED) {
    const match = pattern.exec(err.message);
    if (match) return match[1]!;
  }
  return err.message;
}

/** Whether `err`, from a BullMQ worker's `error` or `failed` event, says a job's lock was lost. */
export function isLockLoss(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "number") return AFTER_LOST_LOCK.has(code);
  return RENEWAL_REFUSED.test(err.message);
}

/** How often at most the summary is logged. */
export const LOCK_LOSS_WINDOW_MS = 10_000;

export interface LockLossReport {
  /**
   * Counts the job a lost-lock error names, once per window however many errors
   * it gives (a refused renewal, then a refused completion); logs at once when it
   * is the window's first, else with the window's summary.
   */
  add(err: Error): void;
  /** Logs what is still counted (a worker closing). */
  flush(): void;
}

/**
 * Counts jobs that lost their lock and warns once per `windowMs`: the first as it
 * comes, the rest as one line at the window's end with their number and an example.
 * `onLost` is called once per job counted.
 */
export function lockLossReport(
  log: WorkerLog,
  lockMs: number,
  onLost: () => void = () => {},
  windowMs = LOCK_LOSS_WINDOW_MS,
): LockLossReport {
  let counted = 0;
  let example = "";
  let jobs = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const warn = (count: number, sample: string): void =>
    log.warn(
      { lockLost: count, example: sample },
      `worker: ${count} job${count === 1 ? "" : "s"} outlived ${count === 1 ? "its" : "their"} ${lockMs} ms lock ` +
        `(STEPWISE_LOCK_MS) and may have run again elsewhere: harmless (commits are fenced, ` +
        `task calls repeat with their operation key), but this worker holds more jobs than it ` +
        `runs in time, or its event loop stood still; lower STEPWISE_CONCURRENCY (per shard served) or add workers. e.g. ${sample}`,
    );
  const close = (): void => {
    timer = undefined;
    if (counted > 0) warn(counted, example);
    counted = 0;
    jobs = new Set();
  };
  return {
    add(err) {
      const job = jobOf(err);
      if (jobs.has(job)) return;
      jobs.add(job);
      onLost();
      if (timer) {
        counted += 1;
        example = err.message;
        return;
      }
      warn(1, err.message);
      timer = setTimeout(close, windowMs);
      timer.unref();
    },
    flush() {
      clearTimeout(timer);
      close();
    },
  };
}
