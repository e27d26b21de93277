import type { Json } from "../../engine/core/json.js";
import { describeFailure, findRunner, type TaskRunner } from "../../task-runners/runner.js";
import {
  BUDGET_EXCEEDED,
  usageOfOutput,
  type MeteredUsage,
} from "../../task-runners/model/budget.js";
import { isModelResource } from "../../task-runners/model/runner.js";
import { BUDGET_AND_USAGE_FIELDS, budgetCheck } from "../commit/usage.js";
import { crashPoint } from "./crash.js";
import { resolveTaskInput } from "../payloads/payload-refs.js";
import type { TaskRecord } from "../commit/effects.js";
import { EXECUTION_ARN_PREFIX, executionOf, longId, member } from "../store/ids.js";
import type { Keys } from "../store/keys.js";
import type { JobQueues } from "./queues.js";
import type { RedisClient } from "../store/redis.js";
import type { RuntimeSettings } from "../settings.js";
import type { RunEventBody } from "../../engine/core/events.js";
import { eventTemplate } from "../store/event-template.js";
import { stepJob } from "../store/job-ids.js";
import { completeTask } from "../store/scripts/complete-task.js";
import { taskCallClaim, type TaskCallClaimReply } from "../store/scripts/task-call-claim.js";
import { attemptTrace, TRACE_READ } from "../tracing/attempt-trace.js";

export interface TaskJobDeps {
  client: RedisClient;
  keys: Keys;
  queues: JobQueues;
  settings: RuntimeSettings;
  runners: readonly TaskRunner[];
  /**
   * A worker advances the run a task result was delivered to itself, right after
   * delivering it, as it does a run whose timer fired (scheduler.ts): a turn of an
   * agent loop then costs no queue hop between the result and the next state. The
   * delivery gave the run a lease, so a crash here leaves the transition to the
   * scheduler; a failure hands it to the queue, with its retries and give-up.
   * `head`: the delivered event, when it is the run's only one (transition.ts `advance`).
   */
  advanceRun?: (run: string, seq: number, head?: string) => Promise<void>;
  /** Who claims task calls in this process (store/scripts/task-call-claim.ts): unique per process. */
  owner: string;
}

export type TaskEventBody =
  | { type: "TaskSucceeded"; output: Json; caller?: string; usage?: MeteredUsage }
  | { type: "TaskFailed"; error: string; cause?: string; caller?: string }
  | { type: "TaskHeartbeat"; caller?: string }
  | { type: "TaskSubmitted"; output: Json; caller?: string };

export type DeliverResult =
  { ok: true } | { ok: false; reason: "InvalidToken" | "TaskDoesNotExist" | "TaskTimedOut" };

/**
 * Delivers a task's result or heartbeat to its run with `completeTask` (fenced by
 * the pending task record, and by the token when a callback answers), then
 * enqueues the run's transition job.
 */
export async function deliverTaskEvent(
  deps: Pick<TaskJobDeps, "client" | "keys" | "queues" | "settings" | "advanceRun">,
  by: { task: string } | { token: string },
  body: TaskEventBody,
): Promise<DeliverResult> {
  const { keys } = deps;
  const reply = await deps.client.call(
    completeTask,
    { tasks: keys.tasks, tokens: keys.tokens, schedule: keys.schedule },
    {
      base: keys.base,
      by,
      event: eventTemplate({ ...body, taskId: "" } as RunEventBody, "taskId"),
      idPrefix: EXECUTION_ARN_PREFIX,
      // A heartbeat or a submission leaves the task waiting for its answer.
      ends: body.type !== "TaskHeartbeat" && body.type !== "TaskSubmitted",
      now: Date.now(),
      leaseMs: deps.settings.leaseMs,
      tombstoneSeconds: deps.settings.tombstoneTtlSeconds,
    },
  );
  if (reply.kind === "delivered") {
    const job = stepJob(reply.run, reply.seq);
    if (deps.advanceRun)
      await deps.advanceRun(reply.run, reply.seq, reply.head).catch(() => deps.queues.ensure(job));
    else await deps.queues.ensure(job);
    return { ok: true };
  }
  if (reply.kind === "unknownToken") return { ok: false, reason: "InvalidToken" };
  if (reply.kind === "ended")
    return { ok: false, reason: reply.why === "done" ? "TaskDoesNotExist" : "TaskTimedOut" };
  return { ok: false, reason: "TaskTimedOut" };
}

/** The execution's fields a task claim answers with: budget and spend, then trace. */
const CLAIM_READ = [...BUDGET_AND_USAGE_FIELDS, ...TRACE_READ];

/**
 * One task call: call the resource of a pending task, then deliver the outcome.
 * It runs in the worker that committed the task, right after the commit
 * (worker.ts, `callTask`), or as a job of the `tasks` queue when that worker
 * had no room or the call must be tried again. Either way it first claims the
 * call (store/scripts/task-call-claim.ts), so a task is never called by two workers at
 * once, and keeps the claim while calling. The call happens outside any commit;
 * if the process dies during it, the claim and the task's lease run out and the
 * scheduler hands the task to the queue: the attempt runs again with the same
 * `taskId` (its idempotency key). A task no longer pending (answered, timed out,
 * stopped) is not called.
 */
export async function runTaskJob(
  deps: TaskJobDeps,
  task: string,
  signal: AbortSignal,
  /** The claim, when it was sent already (`claimTaskCall`, behind the commit of the task). */
  claim?: Promise<TaskCallClaimReply>,
): Promise<void> {
  const claimKeys = claimKeysOf(deps, task);
  const { owner } = deps;
  const leaseMs = deps.settings.lockDurationMs;
  let claimed = await (claim ?? claimTaskCall(deps, task));
  // A claim sent ahead can overtake its commit: a script the server had not cached
  // (after a restart) is sent again, after the claim. Asked again once the commit
  // has answered, the task is there if it committed.
  if (claim && claimed.kind === "gone") claimed = await claimTaskCall(deps, task);
  if (claimed.kind !== "claimed") return;
  const renewal = setInterval(() => {
    deps.client
      .call(taskCallClaim, claimKeys, { action: "renew", task, owner, now: Date.now(), leaseMs })
      .catch(() => {});
  }, leaseMs / 3);
  try {
    // Only a delivery that ends the task drops the claim with it (store/scripts/complete-task.ts).
    const fields = claimed.fields.map((value) => (value === false ? null : value));
    if ((await callClaimed(deps, task, claimed.record, fields, signal)) === "pending")
      await releaseClaim(deps, task);
  } catch (err) {
    // Handed on (a retry, another worker): the claim must not make it wait for its lease.
    await releaseClaim(deps, task);
    throw err;
  } finally {
    clearInterval(renewal);
  }
}

function claimKeysOf(deps: Pick<TaskJobDeps, "keys">, task: string) {
  return {
    tasks: deps.keys.tasks,
    claim: deps.keys.taskClaim(task),
    schedule: deps.keys.schedule,
    execution: deps.keys.execution(executionOf(task)),
  };
}

/**
 * Claims the call of a pending task for this process. Sent on the connection
 * right behind the commit that adds the task (transition.ts), it runs right
 * after that commit in Redis, and the call waits no extra round trip for it.
 */
export function claimTaskCall(
  deps: Pick<TaskJobDeps, "client" | "keys" | "settings" | "owner">,
  task: string,
): Promise<TaskCallClaimReply> {
  return deps.client.call(taskCallClaim, claimKeysOf(deps, task), {
    action: "claim",
    task,
    owner: deps.owner,
    now: Date.now(),
    // As long as a queue job's lock: a worker that dies mid-call gives the call back as soon.
    leaseMs: deps.settings.lockDurationMs,
    // A model call needs the budget and spend before it is sent; every call, its trace.
    read: CLAIM_READ,
  });
}

/** Gives back this process's claim on calling `task` (a no-op when it holds none). */
async function releaseClaim(
  deps: Pick<TaskJobDeps, "client" | "keys" | "owner">,
  task: string,
): Promise<void> {
  await deps.client.call(taskCallClaim, claimKeysOf(deps, task), {
    action: "release",
    task,
    owner: deps.owner,
  });
}

/** Gives back a claim sent ahead for a call that will not be made here. */
export async function releaseTaskCall(
  deps: Pick<TaskJobDeps, "client" | "keys" | "owner">,
  task: string,
  claim: Promise<TaskCallClaimReply>,
): Promise<void> {
  if ((await claim).kind === "claimed") await releaseClaim(deps, task);
}

/** Calls a claimed task; `pending`: the task still waits (for its token's callback). */
async function callClaimed(
  deps: TaskJobDeps,
  task: string,
  raw: string,
  fields: (string | null)[],
  signal: AbortSignal,
): Promise<"pending" | "delivered"> {
  const spend = fields.slice(0, BUDGET_AND_USAGE_FIELDS.length);
  const traced = fields.slice(BUDGET_AND_USAGE_FIELDS.length);
  const record = JSON.parse(raw) as TaskRecord;
  // Parked tasks have no call to make (and no task job): only their token answers them.
  if (record.mode === "park") return "pending";
  const runner = findRunner(deps.runners, record.resource);
  const metered = isModelResource(record.resource);
  const over = metered ? overBudget(spend) : undefined;
  let body: TaskEventBody;
  if (over) {
    // Before any request: the call would take the execution over its budget.
    body = { type: "TaskFailed", error: BUDGET_EXCEEDED, cause: over };
  } else if (!runner) {
    body = {
      type: "TaskFailed",
      error: "States.TaskFailed",
      cause: `No task runner handles resource '${record.resource}'`,
    };
  } else {
    try {
      // References in the input are resolved here: the resource gets the values (payload-refs.ts).
      const input = deps.settings.payloads
        ? await resolveTaskInput(
            deps.client,
            deps.keys,
            executionOf(task),
            record.input,
            deps.settings.payloads.resolveMaxBytes,
          )
        : record.input;
      const call = runner.run({
        resource: record.resource,
        stateName: record.stateName,
        taskId: longId(task),
        // Records stored before the key existed: the attempt's id, as then.
        operationKey: record.operationKey ?? longId(task),
        executionId: longId(executionOf(task)),
        attempt: record.attempt,
        input,
        signal,
        ...(record.token !== undefined ? { taskToken: record.token } : {}),
        ...(record.timeoutSeconds !== undefined ? { timeoutSeconds: record.timeoutSeconds } : {}),
        ...(record.heartbeatSeconds !== undefined
          ? { heartbeatSeconds: record.heartbeatSeconds }
          : {}),
        ...(record.credentials !== undefined ? { credentials: record.credentials } : {}),
        trace: attemptTrace(task, record.enteredEventId, traced),
      });
      crashPoint("duringTask"); // the call has started: a crash now must re-run it with the same task id
      const output = await call;
      if (record.waits && !runner.answersCallbacks) {
        // `.waitForTaskToken`: the call only handed out the token; the callback completes
        // the task. The run records what the call answered (TaskSubmitted).
        await deps.client.redis.zrem(deps.keys.schedule, member.task(task));
        await deliverTaskEvent(deps, { task }, { type: "TaskSubmitted", output: output ?? null });
        return "pending";
      }
      body = { type: "TaskSucceeded", output: output ?? null };
      const usage = metered ? usageOfOutput(output ?? null) : undefined;
      if (usage) body.usage = usage;
    } catch (err) {
      if (signal.aborted) throw err; // shutting down: hand the job back, the attempt runs again
      const failure = describeFailure(err);
      body = { type: "TaskFailed", error: failure.error, cause: failure.cause };
    }
  }
  await deliverTaskEvent(deps, { task }, body);
  return "delivered";
}

/**
 * The cause of a budget refusal, or undefined when the model call may go. Checked
 * against what the execution has committed: model calls of one execution running at
 * the same moment (Map, Parallel) each see the totals before the others' answers, so
 * they may together go past the budget by what those calls spend.
 */
function overBudget(values: (string | null)[] | undefined): string | undefined {
  if (!values) return undefined;
  const over = budgetCheck(values);
  if (!over) return undefined;
  return JSON.stringify({
    message: `The next model call would exceed the execution's ${over.limit} (${String(over.budget[over.limit as keyof typeof over.budget])})`,
    limit: over.limit,
    budget: over.budget,
    usage: over.usage,
  });
}
