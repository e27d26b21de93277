import type { TaskCallClaimReply } from "../store/scripts/task-call-claim.js";
import { taskJob } from "../store/job-ids.js";
import type { JobQueues } from "./queues.js";
import { claimTaskCall, releaseTaskCall, runTaskJob, type TaskJobDeps } from "./task-jobs.js";

/**
 * A task a commit of this worker scheduled is called here at once (task-jobs.ts,
 * claimed like any call), up to `limit` calls at a time over every shard,
 * instead of going through the `tasks` queue: its add, fetch and completion are
 * most of a task turn's Redis work. Past that, or while closing, it is queued as
 * before; a call that throws is queued too, for the queue's retries.
 */
export class TaskCalls {
  private readonly inFlight = new Set<Promise<void>>();
  private closing = false;
  /** Aborted when shutdown's grace ran out: calls made here are queued again for another worker. */
  readonly shutdown = new AbortController();

  constructor(
    private readonly limit: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** From now on every call is queued. */
  close(): void {
    this.closing = true;
  }

  /** The calls in flight now, settled. */
  settled(): Promise<unknown> {
    return Promise.all(this.inFlight);
  }

  /**
   * One shard's `claimAhead` and `callTask` (commit/transition.ts `TransitionDeps`).
   * Claims sent ahead hold a place among the calls until theirs starts.
   */
  forShard(deps: TaskJobDeps, queues: JobQueues) {
    let ahead = 0;
    const claimAhead = (task: string): Promise<TaskCallClaimReply> | undefined => {
      if (this.closing || this.inFlight.size + ahead >= this.limit) return undefined;
      ahead += 1;
      return claimTaskCall(deps, task);
    };
    const callTask = (task: string, claim?: Promise<TaskCallClaimReply>): boolean => {
      if (claim) ahead -= 1;
      if (this.closing || (!claim && this.inFlight.size + ahead >= this.limit)) {
        // Queued instead: the job must not find the call claimed by this process.
        if (claim) releaseTaskCall(deps, task, claim).catch(this.onError);
        return false;
      }
      const call: Promise<void> = runTaskJob(deps, task, this.shutdown.signal, claim)
        .catch(() => queues.ensure(taskJob(task)))
        .catch(this.onError)
        .finally(() => this.inFlight.delete(call));
      this.inFlight.add(call);
      return true;
    };
    return { claimAhead, callTask };
  }
}
