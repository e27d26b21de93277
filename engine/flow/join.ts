import type { ChildSpec } from "../core/effects.js";
import type { RunOutcome } from "../core/events.js";
import type { Json } from "../core/json.js";
import type { Join } from "../core/run.js";
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
  scopeOf: (index: number) => string;
  /** Map iterations (as opposed to Parallel branches). */
  iterations?: boolean;
  toleratedFailureCount?: number;
  toleratedFailurePercentage?: number;
}

export function childRunId(join: Join, index: number): string {
  return `${join.prefix}/${index}`;
}

/** Creates the join and spawns the first window of children. */
export function openJoin(
  ctx: StepContext,
  plan: JoinPlan,
  onStart?: (index: number) => void,
): Join {
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
  for (let i = 0; i < window; i++) {
    const spec = childSpec(join, plan, i, plan.inputs[i]!);
    const started = onStart?.(i);
    if (typeof started === "number") spec.previousEventId = started;
    specs.push(spec);
  }
  join.progress = "r".repeat(window) + join.progress.slice(window);
  if (specs.length > 0) ctx.emit({ type: "SpawnChildren", runId: ctx.run.runId, children: specs });
  return join;
}

function childSpec(
  join: Join,
  plan: Pick<JoinPlan, "scopeOf" | "iterations">,
  index: number,
  input: Json,
): ChildSpec {
  const spec: ChildSpec = {
    runId: childRunId(join, index),
    scope: plan.scopeOf(index),
    index,
    input,
    outer: join.outer,
  };
  if (plan.iterations) spec.iteration = index;
  return spec;
}

export type JoinVerdict =
  | { kind: "pending" }
  | { kind: "succeeded"; results: Json[] }
  | { kind: "failed"; error?: string; cause?: string; exceededTolerance: boolean };

/**
 * Applies one child's end. Returns the new join (a copy) and what the parent
 * should do. `next` lets a Map start the next child of its window.
 */
export function applyChildEnded(
  ctx: StepContext,
  join: Join,
  index: number,
  outcome: RunOutcome,
  next: {
    scopeOf: (index: number) => string;
    iterations?: boolean;
    onStart?: (index: number) => void;
  },
): { join: Join; verdict: JoinVerdict } {
  if (join.progress[index] !== "r") return { join, verdict: { kind: "pending" } };
  const j: Join = { ...join, results: [...join.results] };
  const mark = (i: number, c: string): void => {
    j.progress = j.progress.slice(0, i) + c + j.progress.slice(i + 1);
  };
  if (outcome.status === "SUCCEEDED") {
    j.results[index] = outcome.output;
    j.succeeded += 1;
    mark(index, "s");
  } else {
    j.failed += 1;
    mark(index, "f");
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
      mark(nextIndex, "r");
      const spec = childSpec(j, next, nextIndex, input);
      const started = next.onStart?.(nextIndex);
      if (typeof started === "number") spec.previousEventId = started;
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
