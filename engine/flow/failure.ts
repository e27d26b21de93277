import type { Catcher, MapState, ParallelState, State, TaskState } from "../core/definition.js";
import { StatesError } from "../core/errors.js";
import type { Json } from "../core/json.js";
import { catchOutput } from "../io/index.js";
import type { StepContext } from "../step-context.js";
import { findCatcher } from "./catch.js";
import { decideRetry } from "./retry.js";

type Recoverable = TaskState | ParallelState | MapState;

function isRecoverable(state: State): state is Recoverable {
  return state.Type === "Task" || state.Type === "Parallel" || state.Type === "Map";
}

/**
 * A state raised an error: retry it (Task, Parallel, Map with a matching retrier
 * that has attempts left), else hand it to the first matching catcher, else fail
 * the run. Retry counters live in the frame so that a restart loses none.
 */
export function handleStateError(ctx: StepContext, state: State, err: StatesError): void {
  if (isRecoverable(state)) {
    const frame = ctx.frame;
    const decision = decideRetry(state.Retry, frame.retries, err.error, ctx.random);
    if (decision.retry) {
      const retries = [...(frame.retries ?? [])];
      retries[decision.index] = (retries[decision.index] ?? 0) + 1;
      const timerId = ctx.newTimerId();
      ctx.run.current = {
        ...frame,
        retries,
        retryCount: (frame.retryCount ?? 0) + 1,
        phase: { kind: "backoff", timerId },
      };
      ctx.emit({
        type: "ArmTimer",
        runId: ctx.run.runId,
        timerId,
        at: ctx.now + decision.delayMs,
        purpose: "retry",
      });
      return;
    }
    const catcher = findCatcher(state.Catch, err.error);
    if (catcher) {
      recover(ctx, state, catcher, err);
      return;
    }
  }
  ctx.endRun({ status: "FAILED", error: err.error, cause: err.cause });
}

function recover(ctx: StepContext, state: Recoverable, catcher: Catcher, err: StatesError): void {
  const errorOutput: Json = err.hasCause
    ? { Error: err.error, Cause: err.cause }
    : { Error: err.error };
  let output: Json;
  try {
    output = catchOutput(ctx, state, catcher, ctx.frame.input, errorOutput);
  } catch (e) {
    if (e instanceof StatesError) {
      ctx.endRun({ status: "FAILED", error: e.error, cause: e.cause });
      return;
    }
    throw e;
  }
  ctx.record(`${state.Type}StateExited`, { name: ctx.frame.name, output: JSON.stringify(output) });
  ctx.enter(catcher.Next, output);
}

/**
 * A child's failure becomes the parent's. A Fail state without `Error` fails with
 * no error name at all; AWS then fails the parent the same way, past its catchers.
 */
export function failWith(
  ctx: StepContext,
  state: State,
  error: string | undefined,
  cause: string | undefined,
): void {
  if (error === undefined) {
    ctx.endRun(cause === undefined ? { status: "FAILED" } : { status: "FAILED", cause });
    return;
  }
  handleStateError(ctx, state, new StatesError(error, cause ?? ""));
}

/** Runs `body`, routing a StatesError it raises through Retry/Catch. */
export function guarded(ctx: StepContext, state: State, body: () => void): void {
  try {
    body();
  } catch (e) {
    if (e instanceof StatesError) handleStateError(ctx, state, e);
    else throw e;
  }
}
