import type { Effect } from "../../engine/core/effects.js";
import type { ChildOutcome, RunEvent, RunEventBody } from "../../engine/core/events.js";
import type { Json } from "../../engine/core/json.js";
import type { RunState } from "../../engine/core/run.js";
import { childRun } from "../../engine/step.js";
import { isoTime } from "../../engine/core/timestamp.js";
import { pack } from "../store/codec.js";
import {
  activityName,
  taskMode,
  waitsForCallback,
  waitsForChild,
  type TaskMode,
} from "../../task-runners/resources.js";
import { recordFields } from "../approvals/approval-record.js";
import { executionOf, executionTimeoutTimer, member, randomToken, shortId } from "../store/ids.js";
import { eventTemplate } from "../store/event-template.js";
import { chunkTaskOp } from "../map-runs/express-chunks.js";
import type { CommitOp } from "../store/scripts/commit-transition.js";
import { usageOps } from "./usage.js";
import { childExecutionOps, spawnOwner } from "../map-runs/child-executions.js";
import type { PayloadBatch } from "../payloads/history-payloads.js";

/**
 * Turns the effects of one step into the ops of `commitTransition` (`CommitOp`),
 * so that everything they mean inside Redis commits atomically with
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

/**
 * A task that only parks the run until its token is answered (approvals). It may
 * sit for days in a shared hash, so it keeps only what no one else knows: the
 * state's name and resource are in the run state and the definition
 * (`pendingTasks` reads them there), which keeps the entry about 80 bytes smaller.
 */
export interface ParkedTaskRecord {
  mode: "park";
  token: string;
  /**
   * When it was scheduled (ms), only when that is not when its state was entered
   * (a Retry's later attempt): `pendingTasks` shows it, and the run state has the
   * entry time. Most parked tasks are first attempts, which saves 23 bytes each.
   */
  at?: number;
  approvalId?: string;
  /** Records stored before 2026-12-02 carry these; newer ones leave them to the run. */
  resource?: string;
  stateName?: string;
}

export interface PlanOptions {
  /** Overrides how resources are treated (tests route every resource to a mock runner). */
  taskMode?: (resource: string) => TaskMode;
  now: number;
  /** Ended runs expire this long after (seconds; 0 = never). */
  retentionSeconds?: number;
  /** Approval changes go to the webhook outbox (runtime/settings.ts). */
  approvalEvents?: boolean;
  /** Where the record's large output is stored once (payloads/history-payloads.ts); inline without. */
  payloads?: PayloadBatch;
  /** What new task tokens start with: the shard's mark (store/keys.ts `tokenPrefix`). */
  tokenPrefix?: string;
  /**
   * The execution's definition has no TimeoutSeconds, so no timeout timer was armed
   * (executions/execution-store.ts, executions/redrive.ts arm one only from it) and its end has none to drop.
   */
  noTimeout?: boolean;
  /** When the execution started (ms): its score in the status indexes, which its end moves it between. */
  startedMs?: number;
}

/** Effects of one kind, by their `type`. */
type EffectOf<T extends Effect["type"]> = Extract<Effect, { type: T }>;

/** What every effect of one step is planned with. */
interface Planning {
  run: RunState;
  event: RunEvent;
  effects: Effect[];
  options: PlanOptions;
  /** Ended runs and join data expire this long after (seconds; 0 = never). */
  keepSeconds: number;
}

/** The ops of one step's effects, in the order of its effects (a run's events keep theirs). */
export function planOps(
  run: RunState,
  event: RunEvent,
  effects: Effect[],
  options: PlanOptions,
): CommitOp[] {
  const ops: CommitOp[] = [];
  // A model call's spend joins the execution's totals in the commit of its result.
  if (event.type === "TaskSucceeded" && event.usage) ops.push(...usageOps(event.usage));
  const planning = { run, event, effects, options, keepSeconds: options.retentionSeconds ?? 0 };
  // One by one, not push(...list): a Map's children are as many ops as it has items.
  for (const effect of effects) for (const op of opsOf(effect, planning)) ops.push(op);
  // A Map Run's child execution: its record, written as it starts and as it ends.
  if (run.childExecution) ops.push(...childExecutionOps(run, event, effects, planning.keepSeconds));
  return ops;
}

/** The ops of one effect: what it means inside Redis, as the in-memory driver does it. */
function opsOf(effect: Effect, planning: Planning): CommitOp[] {
  const { keepSeconds } = planning;
  switch (effect.type) {
    case "Continue":
      return [push(effect.runId, { type: "Continue" })];
    case "StorePayload":
      keepPayload(effect, planning.options);
      return [];
    case "RunTask":
      return taskOps(effect, planning);
    case "RunChunk":
      return [chunkTaskOp(effect, planning.run, planning.options.now)];
    case "ArmTimer":
      return [{ op: "arm", member: member.timer(shortId(effect.timerId)), at: effect.at }];
    case "CancelTimer":
      return [{ op: "disarm", member: member.timer(shortId(effect.timerId)) }];
    case "CancelTask":
      return cancelTaskOps(effect, planning.event);
    case "NoticeApproval":
      return [
        { op: "noticeApproval", id: effect.approvalId, event: effect.event, groups: effect.groups },
      ];
    case "SpawnChildren":
      return spawnOps(effect, planning.run);
    case "ContinueJoin":
      return [push(effect.runId, { type: "ContinueJoin", prefix: effect.prefix })];
    case "StopChildren":
      return [
        {
          op: "stopJoin",
          join: shortId(effect.prefix),
          started: effect.started,
          event: JSON.stringify({ type: "Stop" } satisfies RunEventBody),
        },
      ];
    case "CollectResults":
      return [
        {
          op: "collect",
          join: shortId(effect.prefix),
          total: effect.total,
          event: eventTemplate(
            { type: "ResultsCollected", prefix: effect.prefix, outputs: [] },
            "outputs",
          ),
        },
      ];
    case "KeepInputs":
      return [keepInputsOp(effect, keepSeconds)];
    case "KeepOutputs":
      return [
        {
          op: "keepOutputs",
          join: shortId(effect.prefix),
          outputs: effect.outputs.map(([index, output]) => [index, JSON.stringify(output)]),
          keepSeconds,
        },
      ];
    case "RunEnded":
      return effect.parent
        ? childEndedOps(effect, effect.parent, keepSeconds)
        : [endOp(planning.run, planning.event, planning.options, keepSeconds)];
  }
}

/** An event pushed to a run's inbox (at its back, unless `front`). */
function push(runId: string, body: RunEventBody, front = false): CommitOp {
  return { op: "push", run: shortId(runId), event: JSON.stringify(body), front };
}

/** A large payload the step stored by reference: written once, with the commit. */
function keepPayload(effect: EffectOf<"StorePayload">, options: PlanOptions): void {
  if (!options.payloads) throw new Error("a StorePayload effect needs PlanOptions.payloads");
  options.payloads.keep(effect.hash, effect.text);
}

/** The task's record (and token), and for an approval task its approval record. */
function taskOps(effect: EffectOf<"RunTask">, planning: Planning): CommitOp[] {
  const { options } = planning;
  const mode = (options.taskMode ?? taskMode)(effect.resource);
  // Activities and approvals answer through a token even without `.waitForTaskToken`.
  const fresh = (): string => (options.tokenPrefix ?? "") + randomToken();
  // A child execution's `.sync` waits on a token the engine does not hand out (runtime/children/).
  const token =
    effect.taskToken ?? (mode === "call" && !waitsForChild(effect.resource) ? undefined : fresh());
  const record: TaskRecord =
    mode === "park"
      ? parkedRecord(effect, planning.run, token ?? fresh(), options.now)
      : calledRecord(effect, planning.run, mode, token, options.now);
  const ops: CommitOp[] = [
    {
      op: "task",
      task: shortId(effect.taskId),
      record: JSON.stringify(record),
      mode,
      token: record.token,
      activity: mode === "activity" ? (activityName(effect.resource) ?? "") : undefined,
    },
  ];
  if (effect.approval && record.token !== undefined) {
    ops.push(approvalOp(effect, record.token, planning.effects, options));
  }
  return ops;
}

/**
 * A parked task is only ever answered through its token (or an approval's
 * decision); it may sit for days, so it stores only its token and time.
 */
function parkedRecord(
  effect: EffectOf<"RunTask">,
  run: RunState,
  token: string,
  now: number,
): ParkedTaskRecord {
  const record: ParkedTaskRecord = { mode: "park", token };
  const entered = run.current && Date.parse(run.current.enteredTime);
  if (entered !== now) record.at = now;
  if (effect.approval) record.approvalId = effect.approval.approvalId;
  return record;
}

/** What a task job (or an activity worker) needs to make the call. */
function calledRecord(
  effect: EffectOf<"RunTask">,
  run: RunState,
  mode: Exclude<TaskMode, "park">,
  token: string | undefined,
  now: number,
): CalledTaskRecord {
  const called: CalledTaskRecord = {
    resource: effect.resource,
    stateName: effect.stateName,
    input: effect.input,
    attempt: effect.attempt,
    operationKey: effect.operationKey,
    mode,
    at: now,
  };
  if (run.current) called.enteredEventId = run.current.enteredEventId;
  if (token !== undefined) called.token = token;
  if (waitsForCallback(effect.resource)) called.waits = true;
  if (effect.timeoutSeconds !== undefined) called.timeoutSeconds = effect.timeoutSeconds;
  if (effect.heartbeatSeconds !== undefined) called.heartbeatSeconds = effect.heartbeatSeconds;
  if (effect.credentials !== undefined) called.credentials = effect.credentials;
  // Named in the record so that a task ended before any worker took it
  // (a stop, a timeout) also leaves its activity's list (op `untask`).
  if (mode === "activity") called.activity = activityName(effect.resource) ?? "";
  return called;
}

/** The task leaves (its token tombstoned); an approval's record closes with it. */
function cancelTaskOps(effect: EffectOf<"CancelTask">, event: RunEvent): CommitOp[] {
  const ops: CommitOp[] = [{ op: "untask", task: shortId(effect.taskId), why: "timedout" }];
  if (effect.approvalId) {
    const status = event.type === "Stop" ? "CANCELLED" : "EXPIRED";
    ops.push({ op: "closeApproval", id: effect.approvalId, status });
  }
  return ops;
}

/** Each child run created with its Started event (a window's later child: with its kept input). */
function spawnOps(effect: EffectOf<"SpawnChildren">, run: RunState): CommitOp[] {
  return effect.children.map((child): CommitOp => {
    const state = pack(JSON.stringify(childRun(effect.runId, child, run.lastEventId, run.seed)));
    if (child.input === undefined) {
      // A window's later child: its input is the one `KeepInputs` stored.
      const join = shortId(child.runId.slice(0, child.runId.lastIndexOf("/")));
      return {
        op: "spawnKept",
        run: shortId(child.runId),
        state,
        join,
        index: child.index,
        started: eventTemplate({ type: "Started", input: null }, "input"),
        ...spawnOwner(child),
      };
    }
    const started: RunEventBody = { type: "Started", input: child.input };
    return {
      op: "spawn",
      run: shortId(child.runId),
      state,
      started: JSON.stringify(started),
      ...spawnOwner(child),
    };
  });
}

function keepInputsOp(effect: EffectOf<"KeepInputs">, keepSeconds: number): CommitOp {
  return {
    op: "keepInputs",
    join: shortId(effect.prefix),
    from: effect.from,
    // map, not push(...list): a list as long as a Map's items would overflow the stack.
    inputs: effect.inputs.map((input) => JSON.stringify(input)),
    keepSeconds,
  };
}

/** A child's end, told to its parent through the join (and the child's keys expire). */
function childEndedOps(
  { runId, outcome, eventIds }: EffectOf<"RunEnded">,
  parent: NonNullable<EffectOf<"RunEnded">["parent"]>,
  keepSeconds: number,
): CommitOp[] {
  const told: ChildOutcome = outcome.status === "SUCCEEDED" ? { status: "SUCCEEDED" } : outcome;
  const ended: RunEventBody = {
    type: "ChildEnded",
    childRunId: runId,
    index: parent.index,
    outcome: told,
  };
  // The child's last events, which AWS's history links the parent's next event to.
  if (eventIds) ended.eventIds = eventIds;
  const ops: CommitOp[] = [
    {
      op: "joined",
      join: shortId(runId.slice(0, runId.lastIndexOf("/"))),
      index: parent.index,
      output: outcome.status === "SUCCEEDED" ? JSON.stringify(outcome.output) : "null",
      parent: shortId(parent.runId),
      event: JSON.stringify(ended),
      keepSeconds,
    },
  ];
  if (keepSeconds) ops.push({ op: "expire", seconds: keepSeconds });
  return ops;
}

/** The execution's record when its root run ended: status, output or error and cause. */
function endOp(
  run: RunState,
  event: RunEvent,
  options: PlanOptions,
  keepSeconds: number,
): CommitOp {
  const { now, payloads } = options;
  const exec = executionOf(shortId(run.runId));
  const end: CommitOp = {
    op: "end",
    exec,
    status: run.status,
    stoppedAt: isoTime(now),
    ...(options.noTimeout ? {} : { timeoutMember: member.timer(executionTimeoutTimer(exec)) }),
    keepSeconds,
    ...(options.startedMs !== undefined ? { startedMs: options.startedMs } : {}),
    // Nothing redrives a success: its final state would only take room.
    dropRun: run.status === "SUCCEEDED",
  };
  if (run.status === "SUCCEEDED") {
    const output = JSON.stringify(run.output ?? null);
    end.output = payloads ? payloads.ref(output) : output;
  } else if (run.status === "FAILED") {
    end.error = run.error || undefined;
    end.cause = run.cause || undefined;
  } else if (event.type === "Stop") {
    end.error = (event.error ?? (run.status === "TIMED_OUT" ? "States.Timeout" : "")) || undefined;
    end.cause = event.cause || undefined;
  }
  return end;
}

/** The `approval` op: the record of an approval task, created in the commit that schedules it. */
function approvalOp(
  effect: Extract<Effect, { type: "RunTask" }>,
  token: string,
  effects: Effect[],
  options: PlanOptions,
): CommitOp {
  // The task's own timers, armed in this same step: while they are armed no decision is late.
  const timers = effects.flatMap((e) =>
    e.type === "ArmTimer" &&
    e.runId === effect.runId &&
    e.purpose !== "wait" &&
    e.purpose !== "retry" &&
    // Reminders and escalations fire while the approval stays pending.
    e.purpose !== "approvalNotice"
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
  return { op: "approval", id: effect.approval!.approvalId, fields };
}
