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
import type { Join } from "../core/run.js";
import { applyChunkEnded, startChunks } from "./map-express-chunks.js";
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
  /** The join failed (before the state's failure is recorded): a Distributed Map ends its Map Run. */
  joinFailed?(ctx: StepContext, error: string | undefined, cause: string | undefined): void;
  /** Every child ended and their outputs arrived; absent: the state succeeds with them. */
  collected?(ctx: StepContext, state: S, outputs: Json[]): void;
  /** A task of the state's own (a Distributed Map's ItemReader or ResultWriter) answered. */
  onTaskSucceeded?(ctx: StepContext, state: S, output: Json): void;
  onTaskFailed?(ctx: StepContext, state: S, error: string, cause: string | undefined): void;
}

/**
 * `<Kind>StateSucceeded`, then the state's output from the children's results
 * (with children, in the step that receives `ResultsCollected`).
 */
export function succeedChildren<S extends ParallelState | MapState>(
  ctx: StepContext,
  state: S,
  results: Json,
): void {
  ctx.recordAside(`${state.Type}StateSucceeded`);
  guarded(ctx, state, () => {
    ctx.exit(state.Type, state, io(ctx, state).result(ctx, state, ctx.frame.input, results));
  });
}

export function childrenState<S extends ParallelState | MapState>(
  spec: ChildrenSpec<S>,
): StateHandler<S> {
  /** The join after a child's (or a chunk's) end, and what the state does about it. */
  function settle(ctx: StepContext, state: S, join: Join, verdict: JoinVerdict): void {
    ctx.setPhase({ kind: "children", join });
    // The outputs stay with the driver until now; the state ends when they arrive.
    if (verdict.kind === "complete") {
      collectResults(ctx, join);
      // A Distributed Map's ResultWriter tells the children that failed within the tolerance.
      const collecting = ctx.frame.phase;
      if (
        ctx.frame.mapRunArn !== undefined &&
        join.failed > 0 &&
        collecting.kind === "collecting"
      ) {
        ctx.setPhase({
          ...collecting,
          failed: join.failed,
          ...(join.aborted !== undefined ? { aborted: join.aborted } : {}),
        });
      }
    } else if (verdict.kind === "failed") {
      const { error, cause } = spec.failure(verdict);
      spec.joinFailed?.(ctx, error, cause);
      const failed = () => ctx.record(`${spec.kind}StateFailed`, { error, cause });
      // AWS writes it once the state gives up, not before each retry.
      if (ctx.aws) failWith(ctx, state, error, cause, failed);
      else {
        failed();
        failWith(ctx, state, error, cause);
      }
    }
  }

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
      settle(ctx, state, join, verdict);
    },

    onChunkEnded(ctx, state, taskId, end) {
      const phase = ctx.frame.phase;
      if (phase.kind !== "children" || state.Type !== "Map") return;
      const map = state as MapState;
      const { join, verdict } = applyChunkEnded(ctx, map, phase.join, taskId, end);
      if (join === phase.join) return; // stale: not a chunk in flight
      settle(ctx, state, join, verdict);
    },

    onContinueJoin(ctx, state) {
      const phase = ctx.frame.phase;
      if (phase.kind !== "children") return;
      const join =
        phase.join.chunks && state.Type === "Map"
          ? startChunks(ctx, state as MapState, phase.join)
          : continueJoin(ctx, phase.join, childScopesOf(ctx));
      ctx.setPhase({ kind: "children", join });
    },

    onResultsCollected(ctx, state, outputs) {
      if (spec.collected) spec.collected(ctx, state, outputs);
      else succeedChildren(ctx, state, outputs);
    },

    ...(spec.onTaskSucceeded ? { onTaskSucceeded: spec.onTaskSucceeded } : {}),
    ...(spec.onTaskFailed ? { onTaskFailed: spec.onTaskFailed } : {}),
  };
}
