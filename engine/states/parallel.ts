import type { ParallelState } from "../core/definition.js";
import { childScopesOf, openJoin } from "../flow/join.js";
import { io } from "../io/index.js";
import type { StepContext } from "../step-context.js";
import { childrenState, succeedChildren } from "./children.js";
import type { StateHandler } from "./handler.js";

function start(ctx: StepContext, state: ParallelState): void {
  const input = io(ctx, state).arguments(ctx, state, ctx.frame.input);
  ctx.record("ParallelStateStarted");
  const inputs = state.Branches.map(() => input);
  const join = openJoin(ctx, { inputs, maxConcurrency: 0 }, childScopesOf(ctx));
  ctx.setPhase({ kind: "children", join });
  if (join.total === 0) succeedChildren(ctx, state, []);
}

/**
 * Parallel: runs every branch as a child run with the same input; the output is
 * the branches' outputs in branch order. The first failing branch fails the state
 * and stops the others (ASL spec, "Parallel State").
 */
export const parallel: StateHandler<ParallelState> = childrenState<ParallelState>({
  kind: "Parallel",
  start,
  failure: (verdict) => ({ error: verdict.error, cause: verdict.cause }),
});
