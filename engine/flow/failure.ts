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
 * `givingUp` runs once the state is not retried, before its catcher or its failure
 * (HISTORY_FORMAT_AWS writes `<Kind>StateFailed` there).
 */
export function handleStateError(
  ctx: StepContext,
  state: State,
  err: StatesError,
  givingUp?: () => void,
): void {
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
    givingUp?.();
    const catcher = findCatcher(state.Catch, err.error);
    if (catcher) {
      recover(ctx, state, catcher, err);
      return;
    }
  } else givingUp?.();
  // HISTORY_FORMAT_AWS: an error that came without a cause ends the run without one.
  ctx.endRun(
    ctx.aws && !err.hasCause
      ? { status: "FAILED", error: err.error }
      : { status: "FAILED", error: err.error, cause: err.cause },
  );
}

function recover(ctx: StepContext, state: Recoverable, catcher: Catcher, err: StatesError): void {
  const errorOutput: Json = err.hasCause
    ? { Error: err.error, Cause: err.cause }
    : { Error: err.error };
  let output: Json;
  // The exit records what the catcher assigns, not what the failed state did.
  ctx.takeAssigned();
  try {
    output = catchOutput(ctx, state, catcher, ctx.frame.input, errorOutput);
  } catch (e) {
    if (e instanceof StatesError) {
      recordEvaluationFailed(ctx, state, e);
      ctx.endRun({ status: "FAILED", error: e.error, cause: e.cause });
      return;
    }
    throw e;
  }
  ctx.record(`${state.Type}StateExited`, ctx.exitDetails(ctx.frame.name, JSON.stringify(output)));
  ctx.enter(catcher.Next, output);
}

/**
 * HISTORY_FORMAT_AWS: a JSONata evaluation error of the state's own fields is written
 * as AWS writes it, `EvaluationFailed` with the field (`location`) and the state.
 * A Wait evaluates its fields once entered, so the event follows its WaitStateEntered;
 * other states evaluate theirs as they are entered: while nothing followed their
 * StateEntered, the event follows what the StateEntered followed (AWS's recordings).
 * Returns whether it wrote one.
 */
export function recordEvaluationFailed(ctx: StepContext, state: State, err: StatesError): boolean {
  if (!ctx.aws || err.error !== "States.QueryEvaluationError") return false;
  const frame = ctx.frame;
  if (
    state.Type !== "Wait" &&
    frame.enteredAfter !== undefined &&
    ctx.history.lastId === frame.enteredEventId
  ) {
    ctx.follow(frame.enteredAfter);
  }
  ctx.record("EvaluationFailed", {
    error: err.error,
    cause: err.cause,
    ...(err.location !== undefined ? { location: err.location } : {}),
    state: frame.name,
  });
  return true;
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
  givingUp?: () => void,
): void {
  if (error === undefined) {
    givingUp?.();
    ctx.endRun(cause === undefined ? { status: "FAILED" } : { status: "FAILED", cause });
    return;
  }
  // A child's failure without a cause has none (HISTORY_FORMAT_AWS; before, an empty one).
  handleStateError(ctx, state, new StatesError(error, ctx.aws ? cause : (cause ?? "")), givingUp);
}

/**
 * Runs `body`, routing a StatesError it raises through Retry/Catch. HISTORY_FORMAT_AWS:
 * a JSONata evaluation error is written first (`EvaluationFailed`), and a Map or
 * Parallel state that then gives up writes `<Kind>StateFailed`, as AWS does.
 */
export function guarded(ctx: StepContext, state: State, body: () => void): void {
  try {
    body();
  } catch (e) {
    if (!(e instanceof StatesError)) throw e;
    const evaluation = recordEvaluationFailed(ctx, state, e);
    const type = state.Type;
    handleStateError(
      ctx,
      state,
      e,
      evaluation && (type === "Map" || type === "Parallel")
        ? () => ctx.record(`${type}StateFailed`, { error: e.error, cause: e.cause })
        : undefined,
    );
  }
}
