import type { Effect } from "../engine/core/effects.js";
import type { ChildOutcome, RunEvent, RunEventBody } from "../engine/core/events.js";
import type { Json } from "../engine/core/json.js";
import type { RunState } from "../engine/core/run.js";
import { childRun } from "../engine/step.js";
import { pack } from "./codec.js";
import {
  activityName,
  taskMode,
  waitsForCallback,
  type TaskMode,
} from "../task-runners/resources.js";
import { recordFields } from "./approval-record.js";
import { executionOf, executionTimeoutTimer, member, randomToken, shortId } from "./ids.js";
import { usageOps } from "./usage.js";

/**
 * Turns the effects of one step into the ops of `commitTransition` (see its
 * header), so that everything they mean inside Redis commits atomically with
 * the new state. The meaning of each effect follows the in-memory driver
 * (engine/drivers/memory.ts), which is the reference.
 */

/** What a pending task remembers (tasks hash), for its task job and its callbacks. */
export type TaskRecord = CalledTaskRecord | ParkedTaskRecord;

/** A task a runner calls (`call`) or an activity worker polls for (`activity`). */
export interface CalledTaskRecord {
  resource: string;
  stateName: string;
  input: Json;
  attempt: number;
  /** Stable across Retry attempts of one state entry (engine/core/operation-key.ts). */
  operationKey?: string;
  /** The state entry's event id: the attempt's span hangs under that entry's (tracing/span-ids.ts). */
  enteredEventId?: number;
  mode: Exclude<TaskMode, "park">;
  /** `.waitForTaskToken`: the call's own result is ignored; the callback completes the task. */
  waits?: boolean;
  token?: string;
  timeoutSeconds?: number;
  heartbeatSeconds?: number;
  credentials?: Json;
  /** When it was scheduled (ms): `pendingTasks` shows it. */
  at?: number;
  /** An activity task: the activity whose list holds it until a worker takes it. */
  activity?: string;
}

/** A task that only parks the run until its token is answered (approvals). */
export interface ParkedTaskRecord {
  mode: "park";
  token: string;
  resource: string;
  stateName: string;
  /** When it was scheduled (ms): `pendingTasks` shows it. */
  at: number;
  approvalId?: string;
}

export interface PlanOptions {
  /** Overrides how resources are treated (tests route every resource to a mock runner). */
  taskMode?: (resource: string) => TaskMode;
  now: number;
  /** Ended runs expire this long after (seconds; 0 = never). */
  retentionSeconds?: number;
  /** Approval changes go to the webhook outbox (settings.ts). */
  approvalEvents?: boolean;
}

export function planOps(
  run: RunState,
  event: RunEvent,
  effects: Effect[],
  options: PlanOptions,
): (string | Buffer)[] {
  const ops: (string | Buffer)[] = [];
  const modeOf = options.taskMode ?? taskMode;
  const push = (runId: string, body: RunEventBody, front = false): void => {
    ops.push("push", shortId(runId), JSON.stringify(body), front ? "1" : "0");
  };
  // A model call's spend joins the execution's totals in the commit of its result.
  if (event.type === "TaskSucceeded" && event.usage) ops.push(...usageOps(event.usage));
  for (const effect of effects) {
    switch (effect.type) {
      case "Continue":
        push(effect.runId, { type: "Continue" });
        break;
      case "RunTask": {
        const mode = modeOf(effect.resource);
        // Activities and approvals answer through a token even without `.waitForTaskToken`.
        const token = effect.taskToken ?? (mode === "call" ? undefined : randomToken());
        // A parked task is only ever answered through its token (or an approval's
        // decision); it may sit for days, so it stores only what `pendingTasks` shows.
        let record: TaskRecord;
        if (mode === "park") {
          record = {
            mode,
            token: token ?? randomToken(),
            resource: effect.resource,
            stateName: effect.stateName,
            at: options.now,
          };
          if (effect.approval) record.approvalId = effect.approval.approvalId;
        } else {
          const called: CalledTaskRecord = {
            resource: effect.resource,
            stateName: effect.stateName,
            input: effect.input,
            attempt: effect.attempt,
            operationKey: effect.operationKey,
            mode,
            at: options.now,
          };
          if (run.current) called.enteredEventId = run.current.enteredEventId;
          if (token !== undefined) called.token = token;
          if (waitsForCallback(effect.resource)) called.waits = true;
          if (effect.timeoutSeconds !== undefined) called.timeoutSeconds = effect.timeoutSeconds;
          if (effect.heartbeatSeconds !== undefined)
            called.heartbeatSeconds = effect.heartbeatSeconds;
          if (effect.credentials !== undefined) called.credentials = effect.credentials;
          // Named in the record so that a task ended before any worker took it
          // (a stop, a timeout) also leaves its activity's list (op `untask`).
          if (mode === "activity") called.activity = activityName(effect.resource) ?? "";
          record = called;
        }
        const activity = mode === "activity" ? (activityName(effect.resource) ?? "") : "";
        ops.push(
          "task",
          shortId(effect.taskId),
          JSON.stringify(record),
          record.token ?? "",
          mode,
          activity,
        );
        if (effect.approval && record.token !== undefined) {
          ops.push(...approvalOp(effect, record.token, effects, options));
        }
        break;
      }
      case "ArmTimer":
        ops.push("arm", member.timer(shortId(effect.timerId)), String(effect.at));
        break;
      case "CancelTimer":
        ops.push("disarm", member.timer(shortId(effect.timerId)));
        break;
      case "CancelTask":
        ops.push("untask", shortId(effect.taskId), "timedout");
        if (effect.approvalId) {
          ops.push("apclose", effect.approvalId, event.type === "Stop" ? "CANCELLED" : "EXPIRED");
        }
        break;
      case "SpawnChildren":
        for (const child of effect.children) {
          const state = pack(
            JSON.stringify(childRun(effect.runId, child, run.lastEventId, run.seed)),
          );
          if (child.input === undefined) {
            // A window's later child: its input is the one `KeepInputs` stored.
            const prefix = shortId(child.runId.slice(0, child.runId.lastIndexOf("/")));
            ops.push("spawnkept", shortId(child.runId), state, prefix, String(child.index));
          } else {
            const started: RunEventBody = { type: "Started", input: child.input };
            ops.push("spawn", shortId(child.runId), state, JSON.stringify(started));
          }
        }
        break;
      case "ContinueJoin":
        push(effect.runId, { type: "ContinueJoin", prefix: effect.prefix });
        break;
      case "StopChildren":
        ops.push("stopjoin", shortId(effect.prefix), String(effect.started));
        break;
      case "CollectResults":
        // The script appends the outputs (JSON texts, in index order) and `]}`.
        ops.push(
          "collect",
          shortId(effect.prefix),
          String(effect.total),
          `{"type":"ResultsCollected","prefix":${JSON.stringify(effect.prefix)},"outputs":[`,
        );
        break;
      case "KeepInputs":
        ops.push(
          "inputs",
          shortId(effect.prefix),
          String(effect.from),
          String(effect.inputs.length),
          String(options.retentionSeconds ?? 0),
        );
        // A loop, not push(...list): a list as long as a Map's items would overflow the stack.
        for (const input of effect.inputs) ops.push(JSON.stringify(input));
        break;
      case "KeepOutputs":
        ops.push(
          "keep",
          shortId(effect.prefix),
          String(effect.outputs.length),
          String(options.retentionSeconds ?? 0),
        );
        for (const [index, output] of effect.outputs)
          ops.push(String(index), JSON.stringify(output));
        break;
      case "RunEnded":
        if (effect.parent) {
          const { runId, parent, outcome } = effect;
          const told: ChildOutcome =
            outcome.status === "SUCCEEDED" ? { status: "SUCCEEDED" } : outcome;
          const ended: RunEventBody = {
            type: "ChildEnded",
            childRunId: runId,
            index: parent.index,
            outcome: told,
          };
          ops.push(
            "joined",
            shortId(runId.slice(0, runId.lastIndexOf("/"))),
            String(parent.index),
            outcome.status === "SUCCEEDED" ? JSON.stringify(outcome.output) : "null",
            shortId(parent.runId),
            JSON.stringify(ended),
            String(options.retentionSeconds ?? 0),
          );
          if (options.retentionSeconds) ops.push("expire", String(options.retentionSeconds));
        } else {
          ops.push(...endOp(run, event, options.now), String(options.retentionSeconds ?? 0));
        }
        break;
    }
  }
  return ops;
}

/** The execution's record when its root run ended: status, output or error and cause. */
function endOp(run: RunState, event: RunEvent, now: number): string[] {
  const exec = executionOf(shortId(run.runId));
  let output = "";
  let error = "";
  let cause = "";
  if (run.status === "SUCCEEDED") output = JSON.stringify(run.output ?? null);
  else if (run.status === "FAILED") {
    error = run.error ?? "";
    cause = run.cause ?? "";
  } else if (event.type === "Stop") {
    error = event.error ?? (run.status === "TIMED_OUT" ? "States.Timeout" : "");
    cause = event.cause ?? "";
  }
  const stoppedAt = new Date(now).toISOString();
  return [
    "end",
    exec,
    run.status,
    output,
    error,
    cause,
    stoppedAt,
    member.timer(executionTimeoutTimer(exec)),
  ];
}

/** The `approval` op: the record of an approval task, created in the commit that schedules it. */
function approvalOp(
  effect: Extract<Effect, { type: "RunTask" }>,
  token: string,
  effects: Effect[],
  options: PlanOptions,
): string[] {
  // The task's own timers, armed in this same step: while they are armed no decision is late.
  const timers = effects.flatMap((e) =>
    e.type === "ArmTimer" &&
    e.runId === effect.runId &&
    e.purpose !== "wait" &&
    e.purpose !== "retry"
      ? [member.timer(shortId(e.timerId))]
      : [],
  );
  const fields = recordFields(effect.approval!, {
    run: shortId(effect.runId),
    task: shortId(effect.taskId),
    token,
    timers,
    now: options.now,
    notify: options.approvalEvents ?? false,
    keepSeconds: options.retentionSeconds ?? 0,
  });
  return ["approval", effect.approval!.approvalId, String(fields.length / 2), ...fields];
}
