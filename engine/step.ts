import { withPayloads } from "./core/payload-ref.js";
import type { State } from "./core/definition.js";
import type { ChildSpec, Effect } from "./core/effects.js";
import { StatesError } from "./core/errors.js";
import type { RunEvent } from "./core/events.js";
import { operatorEvent, withCaller, type HistoryEvent } from "./core/history.js";
import { endRunState, type ExecutionContext, type RunState } from "./core/run.js";
import type { Program } from "./program.js";
import { choice } from "./states/choice.js";
import { fail } from "./states/fail.js";
import type { StateHandler } from "./states/handler.js";
import { map, updateMapRun } from "./states/map.js";
import { isRunningChunk } from "./states/map-express-chunk-ids.js";
import type { ChunkEnd } from "./states/map-express-chunks.js";
import { parallel } from "./states/parallel.js";
import { pass } from "./states/pass.js";
import { succeed } from "./states/succeed.js";
import { cancelTask, task } from "./states/task.js";
import { wait } from "./states/wait.js";
import { stopRunning } from "./flow/join.js";
import { redriveRun } from "./flow/redrive-join.js";
import { resumeRun } from "./flow/fork-resume.js";
import { jsonText, StepContext } from "./step-context.js";

export interface StepResult {
  run: RunState;
  history: HistoryEvent[];
  effects: Effect[];
}

const HANDLERS: { [T in State["Type"]]: StateHandler<Extract<State, { Type: T }>> } = {
  Pass: pass,
  Task: task,
  Choice: choice,
  Wait: wait,
  Succeed: succeed,
  Fail: fail,
  Parallel: parallel,
  Map: map,
};

function handlerOf(state: State): StateHandler<State> {
  return HANDLERS[state.Type] as StateHandler<State>;
}

/** A new run record, before its `Started` event. */
export function newRun(
  runId: string,
  scope: string,
  options: {
    parent?: RunState["parent"];
    outer?: RunState["outer"];
    iteration?: number;
  } = {},
): RunState {
  const run: RunState = {
    runId,
    scope,
    status: "RUNNING",
    variables: {},
    random: 0,
    lastEventId: 0,
    serial: 0,
  };
  if (options.parent) run.parent = options.parent;
  if (options.outer && Object.keys(options.outer).length > 0) run.outer = options.outer;
  if (options.iteration !== undefined) run.iteration = options.iteration;
  return run;
}

/**
 * The record the driver creates for a run of a fork before its `Restored` event
 * (engine/fork.ts), which carries the run as it was: replay makes the same one.
 */
export function restoredRun(run: RunState): RunState {
  const restored = newRun(run.runId, run.scope, {
    ...(run.parent ? { parent: run.parent } : {}),
    ...(run.iteration !== undefined ? { iteration: run.iteration } : {}),
  });
  // A Map Run's child execution: its history is its own from its first event on.
  if (run.childExecution) restored.childExecution = run.childExecution;
  return restored;
}

/**
 * The record of a child run a `SpawnChildren` effect asks for. Every driver builds
 * children here, so they chain their history the same way: a child's first event
 * follows its MapIterationStarted, else the parent's last event.
 */
export function childRun(
  parentRunId: string,
  child: ChildSpec,
  parentLastEventId: number,
  /** The parent's random seed: one execution, one seed (each run draws its own stream). */
  seed?: string,
): RunState {
  const run = newRun(child.runId, child.scope, {
    parent: { runId: parentRunId, index: child.index },
    outer: child.outer,
    ...(child.iteration !== undefined ? { iteration: child.iteration } : {}),
  });
  if (seed !== undefined) run.seed = seed;
  if (child.historyFormat !== undefined) run.historyFormat = child.historyFormat;
  if (child.execution) run.childExecution = child.execution;
  run.lastEventId = child.previousEventId ?? parentLastEventId;
  return run;
}

/**
 * The interpreter: one event in, the next state of the run out, with the history
 * events it wrote and the effects the driver must carry out. Pure: no I/O, no
 * clock, no randomness beyond the seeded stream in the run. Events that no longer
 * apply (a stale task result, a timer of a finished state) change nothing.
 */
export function step(
  program: Program,
  execution: ExecutionContext,
  run: RunState,
  event: RunEvent,
): StepResult {
  const result = withPayloads(execution.payloads, execution.loadPayload, () =>
    advanceRun(program, execution, run, event),
  );
  if (event.caller === undefined || result.history.length === 0) return result;
  return { ...result, history: withCaller(result.history, event.caller) };
}

function advanceRun(
  program: Program,
  execution: ExecutionContext,
  run: RunState,
  event: RunEvent,
): StepResult {
  if (event.type === "Paused" || event.type === "Resumed") {
    return { run, history: [operatorEvent(event)], effects: [] };
  }
  const ctx = new StepContext(program, execution, run, event);
  if (event.type === "Started") {
    if (run.current || run.status !== "RUNNING") return unchanged(run);
    if (!run.parent || run.childExecution) {
      // A Map Run's child execution starts its own history, as a top level does.
      ctx.record("ExecutionStarted", {
        input: jsonText(event.input),
        roleArn: event.roleArn ?? execution.roleArn ?? "arn:aws:iam::000000000000:role/stepwise",
        ...(event.stateMachineAliasArn !== undefined
          ? { stateMachineAliasArn: event.stateMachineAliasArn }
          : {}),
        ...(event.stateMachineVersionArn !== undefined
          ? { stateMachineVersionArn: event.stateMachineVersionArn }
          : {}),
        ...(event.restartedFrom !== undefined ? { restartedFrom: event.restartedFrom } : {}),
      });
      // AWS: the first state's StateEntered follows no event (previousEventId 0).
      if (ctx.aws) ctx.follow(0);
    }
    ctx.enter(ctx.scope.startAt, event.input);
    return ctx.finish();
  }
  if (event.type === "Forked") {
    if (run.current || run.status !== "RUNNING" || run.parent) return unchanged(run);
    ctx.record("ExecutionForked", {
      sourceExecutionArn: event.sourceExecution,
      sourceEventId: event.sourceEventId,
      input: jsonText(event.input),
      roleArn: execution.roleArn ?? "arn:aws:iam::000000000000:role/stepwise",
    });
    if (event.run && event.resume) resumeRun(ctx, event.resume);
    else ctx.enter(event.state, event.input);
    return ctx.finish();
  }
  if (event.type === "Restored") {
    // A Map iteration or Parallel branch of a fork, in the fresh record `restoredRun` made.
    if (run.current || run.status !== "RUNNING" || run.lastEventId !== 0) return unchanged(run);
    // A Map Run's child execution redriven with its parent: its own history goes on as a
    // redriven execution's does (AWS writes ExecutionRedriven in the child's history).
    const child = ctx.run.childExecution;
    if (event.resume.redrive && child) {
      ctx.record("ExecutionRedriven", { redriveCount: child.redriveCount ?? 1 });
    }
    resumeRun(ctx, event.resume);
    return ctx.finish();
  }
  if (event.type === "Redriven") {
    if (run.parent || run.status === "RUNNING" || run.current) return unchanged(run);
    ctx.record("ExecutionRedriven", { redriveCount: event.redriveCount });
    redriveRun(ctx, event);
    return ctx.finish();
  }
  if (event.type === "Stop" && run.status === "RUNNING" && !run.current && run.parent) {
    // A child stopped before it started (a sibling failed, or its parent was stopped,
    // while its Started event still waited): it ends there and never runs.
    ctx.endRun({ status: "ABORTED" });
    return ctx.finish();
  }
  if (run.status !== "RUNNING" || !run.current) return unchanged(run);
  if (event.type === "Stop") {
    stop(ctx, event);
    return ctx.finish();
  }
  const state = ctx.currentState;
  const handler = handlerOf(state);
  const phase = run.current.phase;
  try {
    switch (event.type) {
      case "Continue":
        if (phase.kind !== "entering") return unchanged(run);
        handler.enter(ctx, state);
        break;
      case "TaskSucceeded":
        if (phase.kind === "children" && isRunningChunk(phase.join, event.taskId)) {
          handler.onChunkEnded?.(ctx, state, event.taskId, {
            kind: "result",
            output: event.output,
          });
          break;
        }
        if (phase.kind !== "task" || phase.taskId !== event.taskId) return unchanged(run);
        handler.onTaskSucceeded?.(ctx, state, event.output);
        break;
      case "TaskFailed":
        if (phase.kind === "children" && isRunningChunk(phase.join, event.taskId)) {
          const end: ChunkEnd = { kind: "failed", error: event.error };
          if (event.cause !== undefined) end.cause = event.cause;
          handler.onChunkEnded?.(ctx, state, event.taskId, end);
          break;
        }
        if (phase.kind !== "task" || phase.taskId !== event.taskId) return unchanged(run);
        handler.onTaskFailed?.(ctx, state, event.error, event.cause);
        break;
      case "TaskHeartbeat":
        if (phase.kind !== "task" || phase.taskId !== event.taskId) return unchanged(run);
        handler.onHeartbeat?.(ctx, state);
        break;
      case "TaskStarted":
        if (phase.kind !== "task" || phase.taskId !== event.taskId) return unchanged(run);
        handler.onTaskStarted?.(ctx, state, event.workerName);
        break;
      case "TaskSubmitted":
        if (phase.kind !== "task" || phase.taskId !== event.taskId) return unchanged(run);
        handler.onTaskSubmitted?.(ctx, state, event.output);
        break;
      case "TimerFired":
        handler.onTimer?.(ctx, state, event.timerId);
        break;
      case "ApprovalDecided":
        if (phase.kind !== "task" || phase.taskId !== event.taskId) return unchanged(run);
        handler.onApprovalDecided?.(ctx, state, event);
        break;
      case "ApprovalNoted":
        if (phase.kind !== "task" || phase.taskId !== event.taskId) return unchanged(run);
        handler.onApprovalNoted?.(ctx, state, event);
        break;
      case "ChildEnded":
        if (phase.kind !== "children" || !event.childRunId.startsWith(`${phase.join.prefix}/`)) {
          return unchanged(run);
        }
        handler.onChildEnded?.(ctx, state, event.index, event.outcome);
        break;
      case "ContinueJoin":
        if (phase.kind !== "children" || event.prefix !== phase.join.prefix) return unchanged(run);
        handler.onContinueJoin?.(ctx, state);
        break;
      case "MapRunUpdated":
        if (phase.kind !== "children" || run.current.mapRunArn !== event.mapRunArn) {
          return unchanged(run);
        }
        updateMapRun(ctx, event);
        break;
      case "ResultsCollected":
        if (phase.kind !== "collecting" || event.prefix !== phase.prefix) return unchanged(run);
        handler.onResultsCollected?.(ctx, state, event.outputs);
        break;
    }
  } catch (e) {
    // Terminal errors raised outside a state's own Retry/Catch (e.g. the data limit).
    if (!(e instanceof StatesError)) throw e;
    ctx.endRun({ status: "FAILED", error: e.error, cause: e.cause });
  }
  return ctx.finish();
}

function unchanged(run: RunState): StepResult {
  return { run, history: [], effects: [] };
}

/** Stop: cancel what the run waits for, stop its children, and end it ABORTED (or TIMED_OUT, or FAILED). */
function stop(ctx: StepContext, event: Extract<RunEvent, { type: "Stop" }>): void {
  const frame = ctx.frame;
  const phase = frame.phase;
  const runId = ctx.run.runId;
  switch (phase.kind) {
    case "task": {
      for (const timerId of phase.timerIds) ctx.emit({ type: "CancelTimer", runId, timerId });
      if (phase.heartbeatTimerId)
        ctx.emit({ type: "CancelTimer", runId, timerId: phase.heartbeatTimerId });
      const state = ctx.currentState;
      if (state.Type === "Task") ctx.emit(cancelTask(runId, state.Resource, phase));
      // A Distributed Map's own I/O (its ItemReader, its ResultWriter) no longer matters;
      // stopped while writing its results, its Map Run (started) is aborted.
      else if (state.Type === "Map") {
        ctx.emit(cancelTask(runId, "", phase));
        if (frame.mapRunArn !== undefined && phase.purpose === "resultWriter") {
          ctx.record("MapRunAborted");
        }
      }
      break;
    }
    case "waiting":
    case "backoff":
      ctx.emit({ type: "CancelTimer", runId, timerId: phase.timerId });
      break;
    case "children":
      stopRunning(ctx, phase.join);
      // A stop aborts a Distributed Map's Map Run (AWS records MapRunAborted).
      if (frame.mapRunArn !== undefined) ctx.record("MapRunAborted");
      break;
    case "collecting":
      if (frame.mapRunArn !== undefined) ctx.record("MapRunAborted");
      break;
    case "entering":
      break;
  }
  if (event.status === "FAILED") {
    ctx.endRun({ status: "FAILED", error: event.error, cause: event.cause });
    return;
  }
  if (!ctx.run.parent || ctx.run.childExecution) {
    const details: { error?: string; cause?: string } = {};
    if (event.error !== undefined) details.error = event.error;
    if (event.cause !== undefined) details.cause = event.cause;
    ctx.record(event.status === "TIMED_OUT" ? "ExecutionTimedOut" : "ExecutionAborted", details);
  }
  ctx.endRun({ status: "ABORTED" });
  if (event.status === "TIMED_OUT") endRunState(ctx.run, { status: "TIMED_OUT" });
}
