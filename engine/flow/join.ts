import type { ChildSpec } from "../core/effects.js";
import type { RunOutcome } from "../core/events.js";
import type { Json } from "../core/json.js";
import type { Join } from "../core/run.js";
import type { ChildScopes } from "../program.js";
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

/** Creates the join and spawns the first window of children. */
export function openJoin(ctx: StepContext, plan: JoinPlan, children: ChildScopes): Join {
  const total = plan.inputs.length;
  const join: Join = {
    prefix: `${ctx.run.runId}/${ctx.nextSerial()}`,
    total,
    progress: ".".repeat(total),
    results: new Array<Json>(total).fill(null),
    succeeded: 0,
    failed: 0,
    maxConcurrency: plan.maxConcurrency,
    outer: { ...ctx.variables() },
  };
  if (plan.toleratedFailureCount !== undefined)
    join.toleratedFailureCount = plan.toleratedFailureCount;
  if (plan.toleratedFailurePercentage !== undefined) {
    join.toleratedFailurePercentage = plan.toleratedFailurePercentage;
  }
  const window = plan.maxConcurrency > 0 ? Math.min(plan.maxConcurrency, total) : total;
  if (window < total) {
    join.pendingInputs = {};
    for (let i = window; i < total; i++) join.pendingInputs[i] = plan.inputs[i]!;
  }
  const specs: ChildSpec[] = [];
  for (let i = 0; i < window; i++) specs.push(startChild(ctx, join, children, i, plan.inputs[i]!));
  join.progress = "r".repeat(window) + join.progress.slice(window);
  if (specs.length > 0) ctx.emit({ type: "SpawnChildren", runId: ctx.run.runId, children: specs });
  return join;
}

/** A child to spawn; a Map iteration first gets its MapIterationStarted, which its history follows. */
function startChild(
  ctx: StepContext,
  join: Join,
  children: ChildScopes,
  index: number,
  input: Json,
): ChildSpec {
  const spec: ChildSpec = {
    runId: childRunId(join, index),
    scope: children.scopes[children.iterations ? 0 : index]!,
    index,
    input,
    outer: join.outer,
  };
  if (children.iterations) {
    spec.iteration = index;
    spec.previousEventId = ctx.record("MapIterationStarted", { name: ctx.frame.name, index });
  }
  return spec;
}

/** `progress` with child `index` marked `c`. */
function mark(progress: string, index: number, c: string): string {
  return progress.slice(0, index) + c + progress.slice(index + 1);
}

export type JoinVerdict =
  | { kind: "pending" }
  | { kind: "succeeded"; results: Json[] }
  | { kind: "failed"; error?: string; cause?: string; exceededTolerance: boolean };

/**
 * Applies one child's end. Returns the new join (a copy) and what the parent
 * should do, starting the next child of a Map's window when one is waiting.
 */
export function applyChildEnded(
  ctx: StepContext,
  join: Join,
  index: number,
  outcome: RunOutcome,
  children: ChildScopes,
): { join: Join; verdict: JoinVerdict } {
  if (join.progress[index] !== "r") return { join, verdict: { kind: "pending" } };
  // slice(), not spread: this copy is the cost of a wide Map's every child end.
  const j: Join = { ...join, results: join.results.slice() };
  if (outcome.status === "SUCCEEDED") {
    j.results[index] = outcome.output;
    j.succeeded += 1;
    j.progress = mark(j.progress, index, "s");
  } else {
    j.failed += 1;
    j.progress = mark(j.progress, index, "f");
    const tolerated =
      j.toleratedFailureCount !== undefined || j.toleratedFailurePercentage !== undefined;
    if (!tolerated || exceedsTolerance(j)) {
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
  if (j.pendingInputs) {
    const nextIndex = j.progress.indexOf(".");
    if (nextIndex >= 0) {
      const pending = { ...j.pendingInputs };
      const input = pending[nextIndex] ?? null;
      delete pending[nextIndex];
      j.pendingInputs = pending;
      j.progress = mark(j.progress, nextIndex, "r");
      const spec = startChild(ctx, j, children, nextIndex, input);
      ctx.emit({ type: "SpawnChildren", runId: ctx.run.runId, children: [spec] });
    } else {
      delete j.pendingInputs;
    }
  }
  if (j.succeeded + j.failed === j.total)
    return { join: j, verdict: { kind: "succeeded", results: j.results } };
  return { join: j, verdict: { kind: "pending" } };
}

/** AWS fails the Map when either threshold is exceeded ("Setting failure thresholds"). */
function exceedsTolerance(j: Join): boolean {
  if (j.toleratedFailureCount !== undefined && j.failed > j.toleratedFailureCount) return true;
  const pct = j.toleratedFailurePercentage;
  return pct !== undefined && j.failed * 100 > pct * j.total;
}

/** Stops every child still running (a sibling failed, or the parent is stopped). */
export function stopRunning(ctx: StepContext, join: Join): void {
  const ids: string[] = [];
  for (let i = 0; i < join.total; i++) if (join.progress[i] === "r") ids.push(childRunId(join, i));
  if (ids.length > 0) ctx.emit({ type: "StopChildren", runId: ctx.run.runId, childRunIds: ids });
}
