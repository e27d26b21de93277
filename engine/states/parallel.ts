import type { ParallelState } from "../core/definition.js";
import { failWith, guarded } from "../flow/failure.js";
import { applyChildEnded, openJoin } from "../flow/join.js";
import { io } from "../io/index.js";
import { branchScope } from "../program.js";
import type { StepContext } from "../step-context.js";
import type { StateHandler } from "./handler.js";

function start(ctx: StepContext, state: ParallelState): void {
  const input = io(ctx, state).arguments(ctx, state, ctx.frame.input);
  ctx.record("ParallelStateStarted");
  const name = ctx.frame.name;
  const scope = ctx.run.scope;
  const join = openJoin(ctx, {
    inputs: state.Branches.map(() => input),
    maxConcurrency: 0,
    scopeOf: (i) => branchScope(scope, name, i),
  });
  ctx.setPhase({ kind: "children", join });
  if (join.total === 0) succeed(ctx, state, []);
}

function succeed(
  ctx: StepContext,
  state: ParallelState,
  results: import("../core/json.js").Json[],
): void {
  ctx.record("ParallelStateSucceeded");
  guarded(ctx, state, () => {
    ctx.exit("Parallel", state, io(ctx, state).result(ctx, state, ctx.frame.input, results));
  });
}

/**
 * Parallel: runs every branch as a child run with the same input; the output is
 * the branches' outputs in branch order. The first failing branch fails the state
 * and stops the others (ASL spec, "Parallel State").
 */
export const parallel: StateHandler<ParallelState> = {
  enter(ctx, state) {
    guarded(ctx, state, () => start(ctx, state));
  },

  onTimer(ctx, state, timerId) {
    const phase = ctx.frame.phase;
    if (phase.kind === "backoff" && phase.timerId === timerId)
      guarded(ctx, state, () => start(ctx, state));
  },

  onChildEnded(ctx, state, index, outcome) {
    const phase = ctx.frame.phase;
    if (phase.kind !== "children") return;
    const name = ctx.frame.name;
    const scope = ctx.run.scope;
    const { join, verdict } = applyChildEnded(ctx, phase.join, index, outcome, {
      scopeOf: (i) => branchScope(scope, name, i),
    });
    ctx.setPhase({ kind: "children", join });
    if (verdict.kind === "succeeded") succeed(ctx, state, verdict.results);
    else if (verdict.kind === "failed") {
      ctx.record("ParallelStateFailed", { error: verdict.error, cause: verdict.cause });
      failWith(ctx, state, verdict.error, verdict.cause);
    }
  },
};
