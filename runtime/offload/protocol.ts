import type { RunEvent } from "../../engine/core/events.js";
import type { Json } from "../../engine/core/json.js";
import type { ExecutionContext, RunState } from "../../engine/core/run.js";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { JsonataLimits } from "../../engine/jsonata/limits.js";
import type { PathLimits } from "../../engine/jsonpath/budget.js";
import type { StepResult } from "../../engine/step.js";

/** What crosses to the evaluation thread and back (structured clone: data only). */

/** The thread's limits: the same budgets as the process that hands it steps. */
export interface ThreadData {
  jsonata: JsonataLimits;
  paths: PathLimits;
}

export type ThreadRequest = StepRequest | EvaluateRequest;

export interface StepRequest {
  id: number;
  kind: "step";
  /** Identifies the definition across requests, so the thread compiles it once. */
  programKey: string;
  definition: StateMachineDefinition;
  execution: Omit<ExecutionContext, "loadPayload">;
  run: RunState;
  event: RunEvent;
  /** Payloads stored by reference that this step reads, loaded by the caller so far. */
  payloads: Record<string, Json>;
}

/** One JSONata expression outside any state (a `waitForEvent` Match), on `input` with `bindings`. */
export interface EvaluateRequest {
  id: number;
  kind: "evaluate";
  expression: string;
  input: Json;
  bindings: Record<string, Json>;
}

export type ThreadReply =
  | { id: number; kind: "stepped"; result: StepResult }
  | { id: number; kind: "evaluated"; value: unknown }
  /** The step reads a payload the request did not carry: send it (or load it), and ask again. */
  | { id: number; kind: "payload"; hash: string }
  /** The step threw (a bug in the engine, as when it throws in place), or the expression did (its error). */
  | { id: number; kind: "threw"; name: string; message: string };
