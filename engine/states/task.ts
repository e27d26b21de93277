import type { TaskState } from "../core/definition.js";
import { StatesError } from "../core/errors.js";
import type { Json } from "../core/json.js";
import { guarded, handleStateError } from "../flow/failure.js";
import { io } from "../io/index.js";
import { exceedsDataLimit, type StepContext } from "../step-context.js";
import type { StateHandler } from "./handler.js";
import {
  recordFailed,
  recordScheduled,
  recordStarted,
  recordSubmitted,
  recordSucceeded,
} from "./task-history.js";

export { describeResource } from "./task-history.js";

/** `.waitForTaskToken` pauses the task until a callback answers for its token. */
export function waitsForToken(resource: string): boolean {
  return resource.endsWith(".waitForTaskToken");
}

function schedule(ctx: StepContext, state: TaskState): void {
  const raw = ctx.frame.input;
  const token = waitsForToken(state.Resource) ? taskToken(ctx) : undefined;
  const lang = io(ctx, state);
  const input = lang.arguments(ctx, state, raw, token);
  // AWS: an effective input over the quota after Parameters fails before the task runs.
  if (exceedsDataLimit(JSON.stringify(input))) {
    throw new StatesError(
      "States.DataLimitExceeded",
      `The state/task '${ctx.frame.name}' has an input with a size exceeding the maximum number of bytes service limit.`,
    );
  }
  const timeoutSeconds = lang.number(ctx, state, "TimeoutSeconds", raw);
  const heartbeatSeconds = lang.number(ctx, state, "HeartbeatSeconds", raw);
  const attempt = ctx.frame.retryCount ?? 0;
  const taskId = `${ctx.run.runId}#${ctx.nextSerial()}`;
  recordScheduled(ctx, state, JSON.stringify(input), timeoutSeconds, heartbeatSeconds);
  const timerIds: string[] = [];
  let heartbeatTimerId: string | undefined;
  if (timeoutSeconds !== undefined) {
    const timerId = ctx.newTimerId();
    timerIds.push(timerId);
    ctx.emit({
      type: "ArmTimer",
      runId: ctx.run.runId,
      timerId,
      at: ctx.now + timeoutSeconds * 1000,
      purpose: "taskTimeout",
    });
  }
  if (heartbeatSeconds !== undefined) {
    heartbeatTimerId = ctx.newTimerId();
    ctx.emit({
      type: "ArmTimer",
      runId: ctx.run.runId,
      timerId: heartbeatTimerId,
      at: ctx.now + heartbeatSeconds * 1000,
      purpose: "heartbeat",
    });
  }
  const phase: Extract<typeof ctx.frame.phase, { kind: "task" }> = {
    kind: "task",
    taskId,
    timerIds,
  };
  if (heartbeatTimerId) phase.heartbeatTimerId = heartbeatTimerId;
  if (token !== undefined) phase.token = token;
  ctx.setPhase(phase);
  const effect: Extract<Parameters<typeof ctx.emit>[0], { type: "RunTask" }> = {
    type: "RunTask",
    runId: ctx.run.runId,
    taskId,
    stateName: ctx.frame.name,
    resource: state.Resource,
    input,
    attempt,
  };
  if (timeoutSeconds !== undefined) effect.timeoutSeconds = timeoutSeconds;
  if (heartbeatSeconds !== undefined) effect.heartbeatSeconds = heartbeatSeconds;
  if (token !== undefined) effect.taskToken = token;
  if (state.Credentials) effect.credentials = state.Credentials;
  ctx.emit(effect);
}

/**
 * Task tokens must be unguessable: they come from the driver's entropy (`nonce`),
 * recorded with the event so that replay rebuilds the same token.
 */
function taskToken(ctx: StepContext): string {
  const nonce = ctx.event.nonce;
  if (!nonce) throw new Error("a task token needs the driver to supply a nonce with the event");
  return nonce;
}

/** Ends the attempt: its timers no longer matter. */
function settle(ctx: StepContext): void {
  const phase = ctx.frame.phase;
  if (phase.kind !== "task") return;
  for (const timerId of [
    ...phase.timerIds,
    ...(phase.heartbeatTimerId ? [phase.heartbeatTimerId] : []),
  ]) {
    ctx.emit({ type: "CancelTimer", runId: ctx.run.runId, timerId });
  }
}

function failAttempt(ctx: StepContext, state: TaskState, error: string, cause: string): void {
  const phase = ctx.frame.phase;
  settle(ctx);
  if (phase.kind === "task") {
    const cancel: Extract<Parameters<typeof ctx.emit>[0], { type: "CancelTask" }> = {
      type: "CancelTask",
      runId: ctx.run.runId,
      taskId: phase.taskId,
    };
    if (phase.token) cancel.taskToken = phase.token;
    ctx.emit(cancel);
  }
  recordFailed(ctx, state, error, cause, true);
  handleStateError(ctx, state, new StatesError(error, cause));
}

/** Task: hands work to a resource and waits for its result (ASL spec, "Task State"). */
export const task: StateHandler<TaskState> = {
  enter(ctx, state) {
    guarded(ctx, state, () => schedule(ctx, state));
  },

  onTaskSucceeded(ctx, state, output: Json) {
    settle(ctx);
    const text = JSON.stringify(output);
    if (exceedsDataLimit(text)) {
      // The raw result counts, even when ResultPath would discard it.
      const cause = `The state/task '${ctx.frame.name}' returned a result with a size exceeding the maximum number of bytes service limit.`;
      recordFailed(ctx, state, "States.DataLimitExceeded", cause);
      handleStateError(ctx, state, new StatesError("States.DataLimitExceeded", cause));
      return;
    }
    recordSucceeded(ctx, state, text);
    guarded(ctx, state, () => {
      ctx.exit("Task", state, io(ctx, state).result(ctx, state, ctx.frame.input, output));
    });
  },

  onTaskFailed(ctx, state, error, cause) {
    settle(ctx);
    recordFailed(ctx, state, error, cause);
    handleStateError(ctx, state, new StatesError(error, cause ?? ""));
  },

  onTaskStarted(ctx, state, workerName) {
    recordStarted(ctx, state, workerName);
  },

  onTaskSubmitted(ctx, state, output) {
    recordSubmitted(ctx, state, JSON.stringify(output));
  },

  onHeartbeat(ctx, state) {
    const phase = ctx.frame.phase;
    if (phase.kind !== "task" || !phase.heartbeatTimerId) return;
    const raw = ctx.frame.input;
    const seconds = io(ctx, state).number(ctx, state, "HeartbeatSeconds", raw);
    if (seconds === undefined) return;
    ctx.emit({ type: "CancelTimer", runId: ctx.run.runId, timerId: phase.heartbeatTimerId });
    const heartbeatTimerId = ctx.newTimerId();
    ctx.setPhase({ ...phase, heartbeatTimerId });
    ctx.emit({
      type: "ArmTimer",
      runId: ctx.run.runId,
      timerId: heartbeatTimerId,
      at: ctx.now + seconds * 1000,
      purpose: "heartbeat",
    });
  },

  onTimer(ctx, state, timerId) {
    const phase = ctx.frame.phase;
    if (phase.kind === "backoff" && phase.timerId === timerId) {
      guarded(ctx, state, () => schedule(ctx, state));
    } else if (phase.kind === "task" && phase.timerIds.includes(timerId)) {
      failAttempt(ctx, state, "States.Timeout", "The task timed out.");
    } else if (phase.kind === "task" && phase.heartbeatTimerId === timerId) {
      // AWS documents States.HeartbeatTimeout, but its recorded executions fail a
      // missed heartbeat with States.Timeout (task-cases: test_heartbeat_no_timeout).
      failAttempt(ctx, state, "States.Timeout", "The task did not send a heartbeat in time.");
    }
  },
};
