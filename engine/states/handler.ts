import type { State } from "../core/definition.js";
import type { ChildOutcome, RunEvent } from "../core/events.js";
import type { Json } from "../core/json.js";
import type { StepContext } from "../step-context.js";
import type { ChunkEnd } from "./map-express-chunks.js";

/**
 * One ASL state type. `enter` runs when a run reaches the state; the other hooks
 * run when an event addressed to the state's pending work arrives. Each hook
 * records history, changes the run through `ctx`, and emits effects.
 */
export interface StateHandler<S extends State> {
  enter(ctx: StepContext, state: S): void;
  onTaskSucceeded?(ctx: StepContext, state: S, output: Json): void;
  onTaskFailed?(ctx: StepContext, state: S, error: string, cause: string | undefined): void;
  onHeartbeat?(ctx: StepContext, state: S): void;
  onTaskStarted?(ctx: StepContext, state: S, workerName: string | undefined): void;
  onTaskSubmitted?(ctx: StepContext, state: S, output: Json): void;
  onTimer?(ctx: StepContext, state: S, timerId: string): void;
  onApprovalDecided?(
    ctx: StepContext,
    state: S,
    event: Extract<RunEvent, { type: "ApprovalDecided" }>,
  ): void;
  onApprovalNoted?(
    ctx: StepContext,
    state: S,
    event: Extract<RunEvent, { type: "ApprovalNoted" }>,
  ): void;
  onChildEnded?(ctx: StepContext, state: S, index: number, outcome: ChildOutcome): void;
  onContinueJoin?(ctx: StepContext, state: S): void;
  /** A chunk of a Distributed Map's EXPRESS items answered (states/map-express-chunks.ts). */
  onChunkEnded?(ctx: StepContext, state: S, taskId: string, end: ChunkEnd): void;
  onResultsCollected?(ctx: StepContext, state: S, outputs: Json[]): void;
}
