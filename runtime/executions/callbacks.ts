import type { Json } from "../../engine/core/json.js";
import { DATA_LIMIT_BYTES } from "../../engine/step-context.js";
import type { ActivityWakeups } from "./activity-wakeups.js";
import { RuntimeError, type ActivityTask, type Caller } from "../contract/index.js";
import type { TaskRecord } from "../commit/effects.js";
import { EXECUTION_ARN_PREFIX, executionOf } from "../store/ids.js";
import { resolveTaskInput } from "../payloads/payload-refs.js";
import { StatesError } from "../../engine/core/errors.js";
import type { RunEventBody } from "../../engine/core/events.js";
import { eventTemplate } from "../store/event-template.js";
import { stepJob } from "../store/job-ids.js";
import { claimActivityTask } from "../store/scripts/claim-activity-task.js";
import { deliverTaskEvent, type TaskEventBody, type TaskJobDeps } from "../worker/task-jobs.js";

type Deps = Pick<TaskJobDeps, "client" | "keys" | "queues" | "settings">;

/** Tokens are ours: URL-safe text. Anything else is refused before touching Redis. */
const TOKEN = /^[A-Za-z0-9_-]{16,256}$/;

/**
 * Task-token callbacks (SendTaskSuccess / SendTaskFailure / SendTaskHeartbeat)
 * and activity polling. A callback is accepted once and only while its task
 * waits: `completeTask` checks token → task → run in one script. A late,
 * repeated or forged token changes nothing and gets a RuntimeError.
 */
export async function answerToken(
  deps: Deps,
  token: string,
  body: TaskEventBody,
  caller: Caller | undefined,
): Promise<void> {
  if (!TOKEN.test(token)) throw new RuntimeError("InvalidToken", "The task token is not valid");
  // With payloads by reference, a larger result is stored once instead (engine/core/payload-ref.ts).
  const limit = deps.settings.payloads?.resolveMaxBytes ?? DATA_LIMIT_BYTES;
  if (body.type === "TaskSucceeded" && Buffer.byteLength(JSON.stringify(body.output)) > limit) {
    throw new RuntimeError(
      "States.DataLimitExceeded",
      `The task output exceeds ${limit === DATA_LIMIT_BYTES ? "256 KiB" : `${limit} bytes (STEPWISE_PAYLOAD_RESOLVE_MAX_BYTES)`}`,
    );
  }
  const withCaller: TaskEventBody = caller ? { ...body, caller: caller.name } : body;
  const result = await deliverTaskEvent(deps, { token }, withCaller);
  if (result.ok) return;
  const messages = {
    InvalidToken: "The task token is not valid",
    TaskDoesNotExist: "The task of this token was already answered",
    TaskTimedOut: "The task of this token no longer waits (it timed out, or its execution stopped)",
  } as const;
  throw new RuntimeError(result.reason, messages[result.reason]);
}

export function successBody(output: Json): TaskEventBody {
  return { type: "TaskSucceeded", output };
}

export function failureBody(error?: string, cause?: string): TaskEventBody {
  const body: TaskEventBody = { type: "TaskFailed", error: error ?? "States.TaskFailed" };
  if (cause !== undefined) body.cause = cause;
  return body;
}

/**
 * What an activity worker is given: the task's input with its payload references
 * resolved (runtime/payloads/payload-refs.ts). Too much to resolve fails the task, as a
 * task job does, and the poll goes on (undefined).
 */
async function activityInput(
  deps: Deps,
  run: string,
  input: Json,
  token: string,
): Promise<Json | undefined> {
  const policy = deps.settings.payloads;
  if (!policy) return input;
  try {
    return await resolveTaskInput(
      deps.client,
      deps.keys,
      executionOf(run),
      input,
      policy.resolveMaxBytes,
    );
  } catch (err) {
    if (!(err instanceof StatesError)) throw err;
    await answerToken(deps, token, failureBody(err.error, err.cause), undefined);
    return undefined;
  }
}

/**
 * Long-polls an activity's pending tasks up to `waitSeconds` on every shard
 * (`shards`: each shard's deps). Each look reads the lengths of the shards'
 * lists first and claims only where something waits, starting from a shard
 * that rotates, so no shard's tasks starve another's. Between looks it sleeps
 * until a task is added (`wakeups`), or `fallbackMs`; without `wakeups`, 50 ms.
 */
export async function pollActivity(
  shards: readonly Deps[],
  activity: string,
  waitSeconds: number,
  workerName: string | undefined,
  wakeups?: ActivityWakeups,
): Promise<ActivityTask | null> {
  const deadline = Date.now() + Math.max(0, waitSeconds) * 1000;
  // Watching before the first look: a task added after it wakes the sleep below.
  const watch = waitSeconds > 0 ? await wakeups?.watch(activity) : undefined;
  const interval = watch ? wakeups!.fallbackMs : 50;
  let turn = Math.floor(Math.random() * shards.length);
  try {
    for (;;) {
      const waiting =
        shards.length === 1
          ? [1]
          : await Promise.all(
              shards.map((deps) => deps.client.redis.llen(deps.keys.activity(activity))),
            );
      for (let i = 0; i < shards.length; i++) {
        const shard = (turn + i) % shards.length;
        if (waiting[shard] === 0) continue;
        const task = await claimActivity(shards[shard]!, activity, workerName);
        if (task) return task;
      }
      turn = (turn + 1) % shards.length;
      const left = deadline - Date.now();
      if (left <= 0) return null;
      const pause = Math.min(interval, Math.max(1, left));
      await (watch ? watch.sleep(pause) : new Promise((resolve) => setTimeout(resolve, pause)));
      if (watch?.closed()) return null;
    }
  } finally {
    watch?.close();
  }
}

/** Claims the oldest live task of one shard's list (skipping ended ones), if any. */
async function claimActivity(
  deps: Deps,
  activity: string,
  workerName: string | undefined,
): Promise<ActivityTask | undefined> {
  const started: RunEventBody = { type: "TaskStarted", taskId: "" };
  if (workerName) started.workerName = workerName;
  const reply = await deps.client.call(
    claimActivityTask,
    {
      activity: deps.keys.activity(activity),
      tasks: deps.keys.tasks,
      schedule: deps.keys.schedule,
    },
    {
      base: deps.keys.base,
      started: eventTemplate(started, "taskId"),
      idPrefix: EXECUTION_ARN_PREFIX,
      leaseUntil: Date.now() + deps.settings.leaseMs,
    },
  );
  if (reply.kind !== "claimed") return undefined;
  await deps.queues.ensure(stepJob(reply.run, reply.seq));
  const record = JSON.parse(reply.record) as TaskRecord;
  if (record.mode !== "activity" || record.token === undefined) return undefined;
  const input = await activityInput(deps, reply.run, record.input, record.token);
  if (input === undefined) return undefined;
  return {
    taskToken: record.token,
    input,
    ...(record.operationKey !== undefined ? { operationKey: record.operationKey } : {}),
  };
}
