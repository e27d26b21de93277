import type { RunEvent } from "../core/events.js";
import type { Json } from "../core/json.js";
import { compileExpression } from "../jsonata/compile.js";
import { newMeter } from "../jsonata/meter.js";
import { METER_BINDING } from "../jsonata/runtime.js";
import type { ExecutionContext, RunState } from "../core/run.js";
import { setInlineSlice, SliceExceeded, type StepSlice } from "../core/step-slice.js";
import type { Program } from "../program.js";
import { step, type StepResult } from "../step.js";

/**
 * Steps (and `waitForEvent` Matches) too heavy for the thread that serves (core/step-slice.ts). A process that
 * answers requests registers where such a step goes (runtime/offload/: an evaluation
 * thread) together with the slice it keeps inline; every driver then steps through
 * `stepHere`, which answers synchronously unless the step passed the slice.
 */
export type OffThreadStep = (
  program: Program,
  execution: ExecutionContext,
  run: RunState,
  event: RunEvent,
) => Promise<StepResult>;

/** A JSONata expression outside any state (a `waitForEvent` Match), evaluated elsewhere. */
export type OffThreadEvaluate = (
  expression: string,
  input: Json,
  bindings: Record<string, Json>,
) => Promise<unknown>;

let offThread: { step: OffThreadStep; evaluate: OffThreadEvaluate } | undefined;

/** From now on, this thread evaluates `slice` of a step inline and hands the rest to `runner`. */
export function offloadHeavySteps(
  slice: StepSlice,
  runner: { step: OffThreadStep; evaluate: OffThreadEvaluate },
): void {
  offThread = runner;
  setInlineSlice(slice);
}

/** Back to evaluating every step here (a process closing its evaluation thread). */
export function stopOffloading(): void {
  offThread = undefined;
  setInlineSlice(undefined);
}

/**
 * `step`, here if it fits the slice, else on the evaluation thread (a promise). The
 * caller awaits only in the rare second case, so the common step costs no turn of
 * the event loop.
 */
export function stepHere(
  program: Program,
  execution: ExecutionContext,
  run: RunState,
  event: RunEvent,
): StepResult | Promise<StepResult> {
  try {
    return step(program, execution, run, event);
  } catch (err) {
    if (err instanceof SliceExceeded && offThread)
      return offThread.step(program, execution, run, event);
    throw err;
  }
}

/**
 * A JSONata expression (the text inside `{% %}`) on `input` with `bindings`, under
 * the JSONata budget: here if it fits this thread's slice, else on the evaluation
 * thread. Throws what the expression throws (jsonata's error objects).
 */
export function evaluateHere(
  expression: string,
  input: Json,
  bindings: Record<string, Json>,
): unknown {
  try {
    return compileExpression(expression).evaluate(input, {
      ...bindings,
      [METER_BINDING]: newMeter(),
    });
  } catch (err) {
    if (err instanceof SliceExceeded && offThread)
      return offThread.evaluate(expression, input, bindings);
    throw err;
  }
}
