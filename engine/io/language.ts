import type {
  Catcher,
  ChoiceState,
  FailState,
  MapState,
  ParallelState,
  PassState,
  State,
  SucceedState,
  TaskState,
  WaitState,
} from "../core/definition.js";
import type { Json } from "../core/json.js";
import type { StepContext } from "../step-context.js";

/**
 * Everything a state does with data, per query language. States call these and
 * never look at InputPath or `{% %}` themselves, so JSONPath and JSONata states
 * share one control flow (AWS: "Transforming data with JSONata", "Processing input
 * and output" for JSONPath).
 *
 * Every method may throw StatesError (States.Runtime, States.QueryEvaluationError,
 * States.IntrinsicFailure, …) using `ctx.causePrefix()` in its cause.
 */
export interface LanguageIO {
  /** Pass: the state's output (and its Assign). */
  pass(ctx: StepContext, state: PassState, raw: Json): Json;
  /** Task/Parallel: the effective input sent to the resource or the branches. */
  arguments(
    ctx: StepContext,
    state: TaskState | ParallelState,
    raw: Json,
    taskToken?: string,
  ): Json;
  /** Task/Parallel/Map: the state output once the result is known (with Assign). */
  result(
    ctx: StepContext,
    state: TaskState | ParallelState | MapState,
    raw: Json,
    result: Json,
  ): Json;
  /** Choice: the next state (undefined when nothing matched and there is no Default) and output. */
  choose(
    ctx: StepContext,
    state: ChoiceState,
    raw: Json,
  ): { next: string | undefined; output: Json };
  /** Wait: the instant (epoch ms) to wake at, and the output. */
  wait(ctx: StepContext, state: WaitState, raw: Json): { until: number; output: Json };
  succeed(ctx: StepContext, state: SucceedState, raw: Json): Json;
  fail(ctx: StepContext, state: FailState, raw: Json): { error?: string; cause?: string };
  /** The output given to a catcher's `Next`, and its Assign. */
  catchOutput(ctx: StepContext, state: State, catcher: Catcher, raw: Json, errorOutput: Json): Json;
  /** Map: the items to iterate and the effective input they were taken from. */
  mapItems(ctx: StepContext, state: MapState, raw: Json): { items: Json[]; effective: Json };
  /** Map: the input of iteration `index` (ItemSelector / Parameters). */
  mapItemInput(ctx: StepContext, state: MapState, effective: Json, item: Json, index: number): Json;
  /** A numeric setting given literally, by path, or by expression; undefined when absent. */
  number(ctx: StepContext, state: State, field: NumericField, raw: Json): number | undefined;
}

export type NumericField =
  | "TimeoutSeconds"
  | "HeartbeatSeconds"
  | "MaxConcurrency"
  | "ToleratedFailurePercentage"
  | "ToleratedFailureCount";
