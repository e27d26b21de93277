import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { stepJobId, taskJobId } from "../store/ids.js";
import { parseJobs } from "../store/job-ids.js";
import { QUEUES, type Keys } from "../store/keys.js";

/**
 * Tries of a job before the worker gives up on its execution (give-up.ts), with
 * exponential backoff from `STEP_BACKOFF_MS` between them (0.5 s, then 1 s).
 */
export const STEP_ATTEMPTS = 3;
const STEP_BACKOFF_MS = 500;

/** Data of a transition job: process run `r` at seq `q`. */
export interface StepJob {
  r: string;
  q: number;
}

/** Data of an operation job: carry out bulk operation `id` (runtime/executions/operations/bulk.ts). */
export interface OperationJob {
  id: string;
}

/** Data of a task job: call the resource of pending task `t` (short id). */
export interface TaskJob {
  t: string;
}

/**
 * The two BullMQ queues: `steps` (one job per transition) and `tasks` (one job per
 * task call, so slow HTTP calls never hold transition slots). Jobs are removed
 * when done: their deterministic ids make re-enqueueing harmless, and a removed
 * job's run has moved on, so a re-created one finds a stale seq and does nothing.
 */
export class JobQueues {
  readonly steps: Queue<StepJob>;
  readonly tasks: Queue<TaskJob>;

  /** The queues of `keys`'s shard: each shard has its own, under its hash tag. */
  constructor(connection: Redis, keys: Keys) {
    const common = {
      connection,
      prefix: keys.bullPrefix,
      // No event stream: nothing listens, and each XADD costs Redis time per job.
      streams: { events: { maxLen: 0 } },
      defaultJobOptions: {
        removeOnComplete: true,
        removeOnFail: true,
        attempts: STEP_ATTEMPTS,
        backoff: { type: "exponential", delay: STEP_BACKOFF_MS },
      },
    };
    this.steps = new Queue<StepJob>(QUEUES.steps, common as never);
    this.tasks = new Queue<TaskJob>(QUEUES.tasks, common as never);
    // Connection errors are retried by ioredis and commands wait meanwhile; an
    // unheard 'error' would print a stack trace per reconnection attempt.
    this.steps.on("error", () => {});
    this.tasks.on("error", () => {});
  }

  /**
   * Makes sure the follow-up jobs of a commit exist. `fx` is a script's list of
   * follow-ups (job-ids.ts).
   */
  async ensure(fx: string | null | undefined): Promise<void> {
    if (!fx) return;
    const steps: { name: string; data: StepJob; opts: { jobId: string } }[] = [];
    const tasks: { name: string; data: TaskJob; opts: { jobId: string } }[] = [];
    for (const job of parseJobs(fx)) {
      if (job.kind === "step") {
        const { run: r, seq: q } = job;
        steps.push({ name: "s", data: { r, q }, opts: { jobId: stepJobId(r, q) } });
      } else {
        const t = job.task;
        tasks.push({ name: "k", data: { t }, opts: { jobId: taskJobId(t) } });
      }
    }
    // Tasks first: a transition that races ahead never needs a task job that is missing.
    if (tasks.length > 0) await this.tasks.addBulk(tasks);
    if (steps.length === 1) await this.steps.add(steps[0]!.name, steps[0]!.data, steps[0]!.opts);
    else if (steps.length > 0) await this.steps.addBulk(steps);
  }

  async close(): Promise<void> {
    await Promise.all([this.steps.close(), this.tasks.close()]);
  }
}

/**
 * The queue of bulk operations (runtime/executions/operations/bulk.ts): one per deployment, under
 * the control tag, beside the operation records.
 */
export function operationsQueue(connection: Redis, control: Keys): Queue<OperationJob> {
  const queue = new Queue<OperationJob>(QUEUES.operations, {
    connection,
    prefix: control.bullPrefix,
    streams: { events: { maxLen: 0 } },
    defaultJobOptions: {
      removeOnComplete: true,
      removeOnFail: true,
      backoff: { type: "exponential", delay: STEP_BACKOFF_MS },
    },
  } as never);
  queue.on("error", () => {});
  return queue;
}
