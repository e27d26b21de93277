import { Worker, type Job } from "bullmq";
import { giveUpOn } from "../commit/give-up.js";
import { advance, type TransitionDeps } from "../commit/transition.js";
import { executionOf, longId, runOfTask } from "../store/ids.js";
import { QUEUES, type Keys } from "../store/keys.js";
import type { LoadSnapshot } from "../store/scripts/load-transition.js";
import type { TaskCallClaimReply } from "../store/scripts/task-call-claim.js";
import { WORKER_DEFAULTS } from "../settings.js";
import { ExecutionFault } from "../tracing/logger.js";
import { JobQueues, STEP_ATTEMPTS, type StepJob, type TaskJob } from "./queues.js";
import { Scheduler } from "./scheduler.js";
import { runTaskJob, type TaskJobDeps } from "./task-jobs.js";
import { jobOptions, type WorkerProcess } from "./worker-process.js";
import type { WorkerOptions } from "./worker.js";

/**
 * One shard's engine room in a worker process: a BullMQ worker on the shard's
 * `steps` (one transition per job), one on its `tasks` (task calls), and its
 * timer scheduler, over the process's connections (worker-process.ts). Runs
 * whose timer fired, and runs a commit here woke, are advanced in the room
 * without a queue job (scheduler.ts `take`), as are task calls it has room for
 * (task-calls.ts).
 */
export interface EngineRoom {
  queues: JobQueues;
  steps: Worker<StepJob>;
  tasks: Worker<TaskJob>;
  scheduler: Scheduler;
}

/** A shard's deps: the process's, with its keys and queues and the in-process paths. */
type RoomDeps = TransitionDeps & TaskJobDeps;

/** How a room advances a run in process: from a job, a fired timer or a delivered result. */
type Fire = (
  run: string,
  seq: number,
  from?: { head: string } | { snapshot: LoadSnapshot },
) => Promise<void>;

export function openEngineRoom(proc: WorkerProcess, keys: Keys): EngineRoom {
  const queues = new JobQueues(proc.connections.queues, keys);
  let scheduler: Scheduler | undefined;
  const deps: RoomDeps = {
    ...proc.shared,
    keys,
    queues,
    // `fire` is defined below, with the scheduler: the same in-process advance.
    advanceRun: (run: string, seq: number, head?: string) =>
      fire(run, seq, head !== undefined ? { head } : undefined),
    callTask: (task: string, claim?: Promise<TaskCallClaimReply>) => calls.callTask(task, claim),
    claimAhead: (task: string) => calls.claimAhead(task),
  };
  const calls = proc.calls.forShard(deps, queues);
  /** How this process advances runs: the runs their commits wake are advanced here too. */
  const inProcess: RoomDeps = {
    ...deps,
    // Into the scheduler's fires (below), as a claimed timer's run is.
    advanceHere: (run: string, seq: number, snapshot?: LoadSnapshot, keep?: boolean) =>
      scheduler?.take(run, seq, snapshot, keep) ?? false,
    siblingsHere: (run: string) => scheduler?.siblingsOf(run) ?? false,
    ensureWhenStale: false,
  };
  // Runs whose timer fired are advanced right here (see scheduler.ts), latency counted from the claim.
  const fire: Fire = (run, seq, from) => {
    proc.watch.busy();
    return advanceCounted(inProcess, run, seq, Date.now(), proc.options.onTransition, from);
  };
  const steps = stepsWorker(proc, keys, deps, inProcess);
  const tasks = tasksWorker(proc, keys, deps);
  scheduler = new Scheduler(proc.shared.client, keys, queues, proc.settings, proc.onError, {
    watch: proc.watch,
    fire: (run, seq, snapshot) => fire(run, seq, snapshot && { snapshot }),
    concurrency: fireConcurrency(proc.options),
  });
  scheduler.start();
  return { queues, steps, tasks, scheduler };
}

/** The worker of the shard's `steps` queue: each job advances its run (and chains on). */
function stepsWorker(
  proc: WorkerProcess,
  keys: Keys,
  deps: RoomDeps,
  inProcess: RoomDeps,
): Worker<StepJob> {
  const worker = new Worker<StepJob>(
    QUEUES.steps,
    isolated<StepJob>(
      proc,
      deps,
      (data) => data.r,
      // A transition waits from its job's enqueue, or in a chain from the commit before it.
      (job) =>
        advanceCounted(inProcess, job.data.r, job.data.q, job.timestamp, proc.options.onTransition),
    ),
    {
      ...jobOptions(proc.settings),
      prefix: keys.bullPrefix,
      connection: proc.connections.steps,
      concurrency: proc.options.concurrency ?? WORKER_DEFAULTS.concurrency,
    },
  );
  worker.on("error", proc.onJobError);
  worker.on("failed", (_job, err) => proc.onJobError(err));
  return worker;
}

/** The worker of the shard's `tasks` queue: retries, and calls past the in-process limit. */
function tasksWorker(proc: WorkerProcess, keys: Keys, deps: RoomDeps): Worker<TaskJob> {
  const worker = new Worker<TaskJob>(
    QUEUES.tasks,
    isolated<TaskJob>(
      proc,
      deps,
      (data) => runOfTask(data.t),
      (job, signal) => runTaskJob(deps, job.data.t, signal),
    ),
    {
      ...jobOptions(proc.settings),
      prefix: keys.bullPrefix,
      connection: proc.connections.tasks,
      concurrency: proc.options.taskConcurrency ?? WORKER_DEFAULTS.taskConcurrency,
    },
  );
  worker.on("error", proc.onJobError);
  worker.on("failed", (_job, err) => proc.onJobError(err));
  return worker;
}

/**
 * Advances the run and reports each committed transition (a job may chain
 * several) with the time since the commit before it (the first: since `since`),
 * or what the job came to when it committed nothing (`stale`, `idle`, `missing`).
 */
async function advanceCounted(
  inProcess: RoomDeps,
  run: string,
  seq: number,
  since: number,
  onTransition: WorkerOptions["onTransition"],
  from?: { head: string } | { snapshot: LoadSnapshot },
): Promise<void> {
  let last = since;
  const onCommit = (steps: number): void => {
    const now = Date.now();
    // A batch's steps became durable together: each is a transition committed now.
    for (let i = 0; i < steps; i++) onTransition?.({ result: "committed", latencyMs: now - last });
    last = now;
  };
  const result = await advance(inProcess, run, seq, onCommit, from);
  if (result !== "committed") onTransition?.({ result, latencyMs: Date.now() - since });
}

/**
 * A job that throws fails alone: BullMQ tries it again with backoff, and after
 * the last attempt its execution is given up on (commit/give-up.ts) and the job ends
 * there, so one poison execution never loops forever nor reaches the process.
 */
function isolated<T>(
  proc: WorkerProcess,
  deps: RoomDeps,
  runOf: (data: T) => string,
  work: (job: Job<T>, signal: AbortSignal) => Promise<void>,
) {
  return async (job: Job<T>, _token?: string, signal?: AbortSignal): Promise<void> => {
    // Its commits may arm timers: the schedule watch polls at the busy rate (scheduler.ts).
    proc.watch.busy();
    try {
      await work(job, signal ?? new AbortController().signal);
    } catch (fault) {
      const run = runOf(job.data);
      const attempts = job.opts.attempts ?? STEP_ATTEMPTS;
      if (job.attemptsMade + 1 < attempts) throw fault;
      const outcome = await giveUpOn(deps, run, attempts, fault);
      const executionId = longId(executionOf(run));
      proc.onError(
        new ExecutionFault(
          `execution ${executionId}: gave up on run '${run}' after ${attempts} attempts (${outcome}): ${fault instanceof Error ? fault.message : String(fault)}`,
          { executionId, run, attempts, outcome },
          { cause: fault },
        ),
      );
    }
  };
}

/** Runs advanced at once in process besides the jobs (`fireConcurrency`, worker.ts). */
function fireConcurrency(options: WorkerOptions): number {
  return (
    options.fireConcurrency ??
    Math.max(options.concurrency ?? WORKER_DEFAULTS.concurrency, WORKER_DEFAULTS.minFireConcurrency)
  );
}
