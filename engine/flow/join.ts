import type { ChildSpec } from "../core/effects.js";
import type { ChildEventIds, ChildOutcome } from "../core/events.js";
import type { Json } from "../core/json.js";
import type { Join } from "../core/run.js";
import type { ChildScopes } from "../program.js";
import { mapRunChildExecution } from "../states/map-child-executions.js";
import { chunkTaskId, isExpressProcessor } from "../states/map-express-chunk-ids.js";
import type { StepContext } from "../step-context.js";

/**
 * Bookkeeping of a Parallel or Map state that waits for child runs. Children run
 * independently (in the durable driver, as records of their own); the parent only
 * sees `ChildEnded` events, applies them here one at a time, and starts more
 * children while a `MaxConcurrency` window has room.
 */
export interface JoinPlan {
  inputs: Json[];
  maxConcurrency: number;
  toleratedFailureCount?: number;
  toleratedFailurePercentage?: number;
}

export function childRunId(join: Join, index: number): string {
  return `${join.prefix}/${index}`;
}

/** Where the current state's children run (compiled with the program). */
export function childScopesOf(ctx: StepContext): ChildScopes {
  const name = ctx.frame.name;
  const children = ctx.scope.children.get(name);
  if (!children) throw new Error(`state '${name}' of '${ctx.scope.pointer}' has no children`);
  return children;
}

/**
 * At most this many children start in one step. A wide join (a 16,000-branch
 * Parallel, a Map over 40,000 items) would otherwise start every child, with its
 * history event, in ONE transition: one commit whose size grows with the join,
 * which a durable driver must write atomically. Past the batch, the join starts
 * the rest in transitions of their own (`ContinueJoin`), each bounded.
 */
export const SPAWN_BATCH = 1000;

/**
 * The variables a join's children see: the state's (AWS: "Parallel and Map states …
 * can reference variables in outer scopes"), except a Distributed Map's, whose child
 * workflows see only their own, as on AWS: STANDARD children (child executions) and
 * EXPRESS ones (run in chunks, engine/states/map-express-chunks.ts) alike. Values they
 * need come through the ItemSelector (or BatchInput), evaluated in the parent.
 */
function outerOf(ctx: StepContext): Record<string, Json> {
  const state = ctx.currentState;
  if (state.Type === "Map") {
    const config = (state.ItemProcessor ?? state.Iterator)?.ProcessorConfig;
    if (config?.Mode === "DISTRIBUTED") return {};
  }
  return { ...ctx.variables() };
}

/** A join of `plan`'s children, none started yet. */
export function newJoin(ctx: StepContext, plan: JoinPlan): Join {
  const join: Join = {
    prefix: `${ctx.run.runId}/${ctx.nextSerial()}`,
    total: plan.inputs.length,
    started: 0,
    succeeded: 0,
    failed: 0,
    maxConcurrency: plan.maxConcurrency,
    outer: outerOf(ctx),
  };
  if (plan.toleratedFailureCount !== undefined)
    join.toleratedFailureCount = plan.toleratedFailureCount;
  if (plan.toleratedFailurePercentage !== undefined) {
    join.toleratedFailurePercentage = plan.toleratedFailurePercentage;
  }
  return join;
}

/** Creates the join and spawns the first batch of its window of children. */
export function openJoin(ctx: StepContext, plan: JoinPlan, children: ChildScopes): Join {
  const total = plan.inputs.length;
  const window = plan.maxConcurrency > 0 ? Math.min(plan.maxConcurrency, total) : total;
  const first = Math.min(window, SPAWN_BATCH);
  const join: Join = { ...newJoin(ctx, plan), started: first };
  // The driver keeps the rest: the parent's state is rewritten at every child's end.
  if (first < total) {
    ctx.emit({
      type: "KeepInputs",
      runId: ctx.run.runId,
      prefix: join.prefix,
      from: first,
      inputs: plan.inputs.slice(first),
    });
  }
  const specs: ChildSpec[] = [];
  for (let i = 0; i < first; i++) specs.push(startChild(ctx, join, children, i, plan.inputs[i]!));
  if (specs.length > 0) ctx.emit({ type: "SpawnChildren", runId: ctx.run.runId, children: specs });
  if (first < window) ctx.emit({ type: "ContinueJoin", runId: ctx.run.runId, prefix: join.prefix });
  return join;
}

/**
 * Starts the join's next batch: as many children as its window has room for (all
 * that are left when it has no limit), at most `SPAWN_BATCH`, and asks for
 * another batch while room is left. Children that ended meanwhile made room; the
 * ones they started (`applyChildEnded`) took it.
 */
export function continueJoin(ctx: StepContext, join: Join, children: ChildScopes): Join {
  const running = join.started - join.succeeded - join.failed;
  const limit = join.maxConcurrency > 0 ? join.maxConcurrency : join.total;
  const room = Math.max(0, limit - running);
  const n = Math.min(join.total - join.started, room, SPAWN_BATCH);
  if (n <= 0) return join;
  const j: Join = { ...join, started: join.started + n };
  const specs: ChildSpec[] = [];
  for (let i = join.started; i < j.started; i++) {
    // No input: the driver gives each child the one it keeps (KeepInputs).
    specs.push(startChild(ctx, j, children, i, undefined));
  }
  ctx.emit({ type: "SpawnChildren", runId: ctx.run.runId, children: specs });
  if (j.started < j.total && room > n) {
    ctx.emit({ type: "ContinueJoin", runId: ctx.run.runId, prefix: j.prefix });
  }
  return j;
}

/** A child to spawn; a Map iteration first gets its MapIterationStarted, which its history follows. */
export function startChild(
  ctx: StepContext,
  join: Join,
  children: ChildScopes,
  index: number,
  input: Json | undefined,
): ChildSpec {
  const spec: ChildSpec = {
    runId: childRunId(join, index),
    scope: children.scopes[children.iterations ? 0 : index]!,
    index,
    outer: join.outer,
  };
  if (input !== undefined) spec.input = input;
  if (ctx.run.historyFormat !== undefined) spec.historyFormat = ctx.run.historyFormat;
  if (children.iterations) {
    spec.iteration = index;
    // A Distributed Map's Map Run runs each item as a child execution: its history is
    // its own, and the parent's records no iteration (AWS: only the Map Run's events).
    // An EXPRESS processor's items have no executions of their own: those a redrive
    // runs again one by one (engine/flow/redrive-join.ts) stay iterations of the parent.
    const state = ctx.currentState;
    const mapRunArn =
      state.Type === "Map" && isExpressProcessor(state) ? undefined : ctx.frame.mapRunArn;
    const execution = mapRunArn !== undefined ? mapRunChildExecution(mapRunArn, index) : undefined;
    if (execution) {
      if (state.Type === "Map" && state.ItemBatcher) execution.batched = true;
      spec.execution = execution;
      spec.previousEventId = 0;
    } else {
      spec.previousEventId = ctx.record("MapIterationStarted", { name: ctx.frame.name, index });
    }
  }
  return spec;
}

export type JoinVerdict =
  | { kind: "pending" }
  /** Every child ended and the state succeeds: collect the outputs. */
  | { kind: "complete" }
  | { kind: "failed"; error?: string; cause?: string; exceededTolerance: boolean };

/**
 * Applies one child's end. Returns the new join (a copy of a few counters: the
 * cost is the same for the first child and the ten-thousandth) and what the
 * parent should do, starting the next child of a Map's window when one is waiting.
 * The driver delivers each child's end once (it keeps the ends, see `CollectResults`),
 * so the join only counts them; an end for a child that never started is stale.
 *
 * `ended` (HISTORY_FORMAT_AWS): the child's last events, which the parent's next
 * event follows, as in AWS's history: a failure that fails the state, and the next
 * child's MapIterationStarted, follow the child's last event; anything else (the
 * state's success, once every child ended) follows the child's end event.
 */
export function applyChildEnded(
  ctx: StepContext,
  join: Join,
  index: number,
  outcome: ChildOutcome,
  children: ChildScopes,
  ended?: ChildEventIds,
): { join: Join; verdict: JoinVerdict } {
  if (index >= join.started || join.succeeded + join.failed >= join.started) {
    return { join, verdict: { kind: "pending" } };
  }
  if (ended) ctx.follow(ended.end);
  const j: Join = { ...join };
  if (outcome.status === "SUCCEEDED") {
    j.succeeded += 1;
  } else {
    j.failed += 1;
    if (outcome.status === "ABORTED") j.aborted = (j.aborted ?? 0) + 1;
    const tolerated =
      j.toleratedFailureCount !== undefined || j.toleratedFailurePercentage !== undefined;
    if (!tolerated || exceedsTolerance(j)) {
      if (ended) ctx.follow(ended.last);
      stopRunning(ctx, j);
      const verdict: JoinVerdict = { kind: "failed", exceededTolerance: tolerated };
      if (outcome.status === "FAILED") {
        if (outcome.error !== undefined) verdict.error = outcome.error;
        if (outcome.cause !== undefined) verdict.cause = outcome.cause;
      }
      return { join: j, verdict };
    }
  }
  // Start the next child of the window, if any is waiting.
  if (j.started < j.total) {
    const next = j.started;
    j.started += 1;
    if (ended) ctx.follow(ended.last);
    // No input: the driver gives the child the one it keeps (KeepInputs).
    const spec = startChild(ctx, j, children, next, undefined);
    ctx.emit({ type: "SpawnChildren", runId: ctx.run.runId, children: [spec] });
  }
  if (j.succeeded + j.failed === j.total) return { join: j, verdict: { kind: "complete" } };
  return { join: j, verdict: { kind: "pending" } };
}

/** AWS fails the Map when either threshold is exceeded ("Setting failure thresholds"). */
export function exceedsTolerance(j: Join): boolean {
  if (j.toleratedFailureCount !== undefined && j.failed > j.toleratedFailureCount) return true;
  const pct = j.toleratedFailurePercentage;
  return pct !== undefined && j.failed * 100 > pct * j.total;
}

/**
 * Stops every child still running (a sibling failed, or the parent is stopped):
 * the driver skips the started children that already ended.
 */
export function stopRunning(ctx: StepContext, join: Join): void {
  if (join.succeeded + join.failed >= join.started) return;
  if (join.chunks) {
    // Chunks in flight are tasks of the state's own: their results will be ignored.
    for (const [from] of join.chunks.running) {
      ctx.emit({
        type: "CancelTask",
        runId: ctx.run.runId,
        taskId: chunkTaskId(join.prefix, from),
      });
    }
    return;
  }
  ctx.emit({
    type: "StopChildren",
    runId: ctx.run.runId,
    prefix: join.prefix,
    started: join.started,
  });
}

/** The join completed: ask the driver for the children's outputs (`ResultsCollected`). */
export function collectResults(ctx: StepContext, join: Join): void {
  ctx.emit({
    type: "CollectResults",
    runId: ctx.run.runId,
    prefix: join.prefix,
    total: join.total,
  });
  ctx.setPhase({ kind: "collecting", prefix: join.prefix, total: join.total });
}

/** Outputs of a join's children that the driver keeps without their runs (effect `KeepOutputs`). */
export function keepOutputs(ctx: StepContext, prefix: string, outputs: [number, Json][]): void {
  ctx.emit({ type: "KeepOutputs", runId: ctx.run.runId, prefix, outputs });
}
