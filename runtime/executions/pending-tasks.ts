import type { RunState } from "../../engine/core/run.js";
import { scopeOf, type Program } from "../../engine/program.js";
import { unpack } from "../store/codec.js";
import type { PendingTask } from "../contract/index.js";
import type { TaskRecord } from "../commit/effects.js";
import type { ExecutionCache } from "../commit/execution-cache.js";
import type { ExecutionStore } from "./execution-store.js";
import { isChildExecutionId } from "../../engine/states/map-child-executions.js";
import { executionOf, member, shortId } from "../store/ids.js";
import { EXECUTION_FIELDS, RUN_FIELDS } from "../store/fields.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";

/**
 * The pending tasks of an execution (404 for one that does not exist), from its root
 * run in its own program; a Map Run's child execution is a run of its parent's, in
 * its parent's program.
 */
export async function pendingTasksOf(
  client: RedisClient,
  room: { keys: Keys; executions: ExecutionStore },
  cache: ExecutionCache,
  executionId: string,
): Promise<PendingTask[]> {
  const { keys } = room;
  await room.executions.describe(executionId);
  const exec = shortId(executionId);
  const childRun = isChildExecutionId(exec)
    ? await client.redis.hget(keys.execution(exec), EXECUTION_FIELDS.childRun)
    : null;
  const { program } = await cache.get(childRun ? executionOf(childRun) : exec);
  return pendingTasks(client, keys, childRun ?? exec, program);
}

/** Runs looked at per call: a Map of thousands parked children shows its first ones. */
const MAX_RUNS = 1000;

/**
 * The tasks of an execution that wait to be answered: a callback on a token, an
 * activity worker, an approval's decision. Read from the runs themselves (the
 * root and, through their joins, the Map and Parallel children still running),
 * the task records and the schedule's timers: nothing extra is kept to answer it.
 */
export async function pendingTasks(
  client: RedisClient,
  keys: Keys,
  /** The execution's root run: its short id, or a Map Run child execution's run. */
  root: string,
  program: Program,
): Promise<PendingTask[]> {
  const redis = client.redis;
  const found: PendingTask[] = [];
  let runs = [root];
  let visited = 0;
  while (runs.length > 0 && visited < MAX_RUNS) {
    const batch = runs.slice(0, MAX_RUNS - visited);
    visited += batch.length;
    const pipeline = redis.pipeline();
    for (const run of batch) pipeline.hgetallBuffer(keys.run(run));
    const rows = (await pipeline.exec()) ?? [];
    const next: string[] = [];
    const waiting: {
      state: RunState;
      phase: Extract<NonNullable<RunState["current"]>["phase"], { kind: "task" }>;
    }[] = [];
    for (const [, fields] of rows) {
      const state = runState(fields as Record<string, Buffer> | null);
      const phase = state?.current?.phase;
      if (!state || state.status !== "RUNNING" || !phase) continue;
      if (phase.kind === "task") waiting.push({ state, phase });
      // A Distributed Map's items are child executions: their tasks are theirs, not
      // the parent's (as on AWS), and walking a thousand of them on every describe
      // cost a parent's REST reader an eighth of Redis's commands (bench/distributed-map.ts).
      if (phase.kind === "children" && state.current?.mapRunArn === undefined) {
        for (let i = 0; i < phase.join.started; i++)
          next.push(`${shortId(phase.join.prefix)}/${i}`);
      }
    }
    for (const { state, phase } of waiting) {
      const raw = await redis.hget(keys.tasks, shortId(phase.taskId));
      if (raw === null) continue;
      const record = JSON.parse(raw) as TaskRecord;
      // A task being called by a runner waits on nothing anyone can answer.
      if (record.mode === "call" && record.token === undefined) continue;
      const timer = (id: string | undefined) =>
        id === undefined
          ? Promise.resolve(null)
          : redis.zscore(keys.schedule, member.timer(shortId(id)));
      const timeouts = await Promise.all(phase.timerIds.map((id) => timer(id)));
      const heartbeat = await timer(phase.heartbeatTimerId);
      const due = timeouts.filter((t): t is string => t !== null).map(Number);
      const pending: PendingTask = {
        stateName: state.current!.name,
        resource: record.resource ?? resourceOf(program, state),
        scheduledAt: new Date(record.at ?? Date.parse(state.current!.enteredTime)).toISOString(),
      };
      if (due.length > 0) pending.timeoutAt = new Date(Math.min(...due)).toISOString();
      if (heartbeat !== null) pending.heartbeatDeadline = new Date(Number(heartbeat)).toISOString();
      if (record.mode === "park" && record.approvalId) pending.approvalId = record.approvalId;
      if (record.token !== undefined) pending.taskToken = record.token;
      found.push(pending);
    }
    runs = next;
  }
  return found;
}

/** The Task state's `Resource` a run waits in (a parked task's record leaves it to the definition). */
function resourceOf(program: Program, state: RunState): string {
  const current = state.current && scopeOf(program, state.scope).states[state.current.name];
  return current?.Type === "Task" ? current.Resource : "";
}

/** A run's state from its hash: one field, or 64-byte slices (store/lua/run-state.ts). */
function runState(fields: Record<string, Buffer> | null): RunState | undefined {
  if (!fields) return undefined;
  const n = Number(fields[RUN_FIELDS.stateSlices]?.toString() ?? "0");
  let stored: Buffer | undefined;
  if (n === 0) stored = fields[RUN_FIELDS.state];
  else {
    const parts: Buffer[] = [];
    for (let i = 1; i <= n; i++) {
      const part = fields[`${RUN_FIELDS.state}${i}`];
      if (!part) return undefined;
      parts.push(part);
    }
    stored = Buffer.concat(parts);
  }
  if (!stored) return undefined;
  try {
    return JSON.parse(unpack(stored)) as RunState;
  } catch {
    // Unreadable (the worker gives up on such a run, see give-up.ts): nothing to show,
    // and reading the execution must not fail because of it.
    return undefined;
  }
}
