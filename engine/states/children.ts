import type { MapState, ParallelState } from "../core/definition.js";
import type { Json } from "../core/json.js";
import { failWith, guarded } from "../flow/failure.js";
import {
  applyChildEnded,
  childScopesOf,
  collectResults,
  continueJoin,
  type JoinVerdict,
} from "../flow/join.js";
import { io } from "../io/index.js";
import type { StepContext } from "../step-context.js";
import type { StateHandler } from "./handler.js";

type Failed = Extract<JoinVerdict, { kind: "failed" }>;

/**
 * What differs between Parallel and Map: how children start and which error a
 * failed join raises. Everything else — retry restarts, applying child ends,
 * success and failure events — is shared.
 */
export interface ChildrenSpec<S extends ParallelState | MapState> {
  kind: S["Type"];
  start(ctx: StepContext, state: S): void;
  failure(verdict: Failed): { error?: string; cause?: string };
}

/**
 * `<Kind>StateSucceeded`, then the state's output from the children's results
 * (with children, in the step that receives `ResultsCollected`).
 */
export function succeedChildren<S extends ParallelState | MapState>(
  ctx: StepContext,
  state: S,
  results: Json[],
): void {
  ctx.recordAside(`${state.Type}StateSucceeded`);
  guarded(ctx, state, () => {
    ctx.exit(state.Type, state, io(ctx, state).result(ctx, state, ctx.frame.input, results));
  });
}

export function childrenState<S extends ParallelState | MapState>(
  spec: ChildrenSpec<S>,
): StateHandler<S> {
  return {
    enter(ctx, state) {
      guarded(ctx, state, () => spec.start(ctx, state));
    },

    onTimer(ctx, state, timerId) {
      const phase = ctx.frame.phase;
      if (phase.kind === "backoff" && phase.timerId === timerId) {
        guarded(ctx, state, () => spec.start(ctx, state));
      }
    },

    onChildEnded(ctx, state, index, outcome) {
      const phase = ctx.frame.phase;
      if (phase.kind !== "children") return;
      const event = ctx.event;
      const ended = ctx.aws && event.type === "ChildEnded" ? event.eventIds : undefined;
      const { join, verdict } = applyChildEnded(
        ctx,
        phase.join,
        index,
        outcome,
        childScopesOf(ctx),
        ended,
      );
      ctx.setPhase({ kind: "children", join });
      // The outputs stay with the driver until now; the state ends when they arrive.
      if (verdict.kind === "complete") collectResults(ctx, join);
      else if (verdict.kind === "failed") {
        const { error, cause } = spec.failure(verdict);
        const failed = () => ctx.record(`${spec.kind}StateFailed`, { error, cause });
        // AWS writes it once the state gives up, not before each retry.
        if (ctx.aws) failWith(ctx, state, error, cause, failed);
        else {
          failed();
          failWith(ctx, state, error, cause);
        }
      }
    },

    onContinueJoin(ctx) {
      const phase = ctx.frame.phase;
      if (phase.kind !== "children") return;
      ctx.setPhase({ kind: "children", join: continueJoin(ctx, phase.join, childScopesOf(ctx)) });
    },

    onResultsCollected(ctx, state, outputs) {
      succeedChildren(ctx, state, outputs);
    },
  };
}
