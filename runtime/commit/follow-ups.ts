import { executionOf } from "../store/ids.js";
import { parseJob } from "../store/job-ids.js";
import type { CommitOp } from "../store/scripts/commit-transition.js";
import type { LoadSnapshot } from "../store/scripts/load-transition.js";
import type { TaskCallClaimReply } from "../store/scripts/task-call-claim.js";
import type { TransitionDeps } from "./transition.js";

/**
 * Step 6 of the commit protocol (transition.ts): the follow-ups of a commit. A
 * worker calls the task a commit adds itself when it has room, with a claim sent
 * right behind the commit (`claimAhead`), and advances the runs the commit woke
 * (`advanceHere`); what it has no room for goes to the queues.
 */

/** A claim sent behind a commit, on the task call it adds (`claimAhead`). */
export interface AheadClaim {
  task: string;
  reply: Promise<TaskCallClaimReply>;
}

/** The task a commit adds for this process to call, if it adds one (a run waits on one at most). */
export function calledTask(ops: readonly CommitOp[]): string | undefined {
  const op = ops.find((o) => o.op === "task" && o.mode === "call");
  return op?.op === "task" ? op.task : undefined;
}

/** The claim on the commit's task call, sent now, behind the commit (`claimAhead`). */
export function claimBehind(
  deps: TransitionDeps,
  task: string | undefined,
): AheadClaim | undefined {
  if (task === undefined || !deps.claimAhead || !deps.callTask) return undefined;
  const reply = deps.claimAhead(task);
  return reply && { task, reply };
}

/** A claim sent ahead goes to `callTask` whatever became of its commit: it is called only if claimed. */
export function handOver(deps: TransitionDeps, claim: AheadClaim | undefined): void {
  if (claim) deps.callTask?.(claim.task, claim.reply);
}

/**
 * The follow-ups left for the queue once this process took the task calls and
 * the run advances it has room for (worker/worker.ts): each skips a queue job's
 * add, fetch and finish. Every run a commit woke holds a lease in the schedule,
 * so one this process dies before advancing is enqueued when the lease runs out.
 */
export function callHere(
  deps: TransitionDeps,
  fx: string | null | undefined,
  claim?: AheadClaim,
  /** The children the commit started, as it wrote them (fenced-commit.ts `spawnedRuns`). */
  spawned?: ReadonlyMap<string, LoadSnapshot>,
  /** The run whose commit woke them: runs of its execution are kept here (scheduler.ts `take`). */
  committed?: string,
): string | null | undefined {
  const exec = committed !== undefined ? executionOf(committed) : undefined;
  let ahead = claim;
  const claimOf = (task: string) => {
    if (ahead?.task !== task) return undefined;
    const reply = ahead.reply;
    ahead = undefined;
    return reply;
  };
  const queued: string[] = [];
  if (fx && (deps.callTask || deps.advanceHere)) {
    for (const entry of fx.split(" ")) {
      const job = parseJob(entry);
      if (job?.kind === "task" && deps.callTask?.(job.task, claimOf(job.task))) continue;
      if (job?.kind === "step") {
        const snapshot = job.seq === 0 ? spawned?.get(job.run) : undefined;
        const keep = exec !== undefined && executionOf(job.run) === exec;
        if (deps.advanceHere?.(job.run, job.seq, snapshot, keep)) continue;
      }
      queued.push(entry);
    }
  } else if (fx) return fx;
  handOver(deps, ahead);
  return queued.join(" ");
}
