import type { TaskState } from "../core/definition.js";
import type { HistoryDetails } from "../core/history-details.js";
import type { Effect } from "../core/effects.js";
import type { Phase } from "../core/run.js";
import { StatesError } from "../core/errors.js";
import type { Json } from "../core/json.js";
import { operationKey } from "../core/operation-key.js";
import { guarded, handleStateError } from "../flow/failure.js";
import { io } from "../io/index.js";
import { exceedsDataLimit, type StepContext } from "../step-context.js";
import {
  approvalIdOf,
  approvalRequest,
  isApprovalResource,
  isParkResource,
  type ApprovalRequest,
} from "./approval.js";
import type { StateHandler } from "./handler.js";
import {
  recordFailed,
  recordScheduled,
  recordStarted,
  recordSubmitted,
  recordSucceeded,
} from "./task-history.js";

export { describeResource } from "./task-history.js";

/**
 * `.waitForTaskToken` pauses the task until a callback answers for its token; the
 * resources Stepwise parks itself (approvals) wait on one whatever their spelling.
 */
export function waitsForToken(resource: string): boolean {
  return resource.endsWith(".waitForTaskToken") || isParkResource(resource);
}

function schedule(ctx: StepContext, state: TaskState): void {
  const raw = ctx.frame.input;
  const token = waitsForToken(state.Resource) ? taskToken(ctx) : undefined;
  const lang = io(ctx, state);
  let input = lang.arguments(ctx, state, raw, token);
  const inputText = JSON.stringify(input);
  // Stored once and resolved when the resource is called (core/payload-ref.ts); an
  // approval's input stays whole: the engine reads it to build the request.
  if (!isApprovalResource(state.Resource) && ctx.goesByReference(inputText)) {
    input = ctx.storePayload(inputText, input) as unknown as Json;
  }
  // AWS: an effective input over the quota after Parameters fails before the task runs.
  else if (exceedsDataLimit(inputText)) {
    throw new StatesError(
      "States.DataLimitExceeded",
      `The state/task '${ctx.frame.name}' has an input with a size exceeding the maximum number of bytes service limit.`,
    );
  }
  const timeoutSeconds = lang.number(ctx, state, "TimeoutSeconds", raw);
  const heartbeatSeconds = lang.number(ctx, state, "HeartbeatSeconds", raw);
  const attempt = ctx.frame.retryCount ?? 0;
  const approval = isApprovalResource(state.Resource)
    ? approvalRequest(input, {
        executionId: ctx.execution.executionId,
        stateMachine: ctx.execution.stateMachineName,
        stateName: ctx.frame.name,
        enteredEventId: ctx.frame.enteredEventId,
        now: ctx.now,
        token: token!,
        timeoutSeconds,
      })
    : undefined;
  const taskId = `${ctx.run.runId}#${ctx.nextSerial()}`;
  // The first attempt names the operation; its retries keep the name (the frame survives them).
  const key = ctx.frame.operationKey ?? operationKey(taskId);
  if (ctx.frame.operationKey === undefined) ctx.run.current = { ...ctx.frame, operationKey: key };
  recordScheduled(ctx, state, JSON.stringify(input), timeoutSeconds, heartbeatSeconds, key);
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
  let request: ApprovalRequest | undefined;
  if (approval) {
    const { explicitExpiry, ...rest } = approval;
    request = rest;
    ctx.record("ApprovalRequested", envelopeDetails(request));
    if (explicitExpiry && request.expiresAt !== null) {
      // An expiry of its own; the state's TimeoutSeconds, if any, still times out as States.Timeout.
      const timerId = ctx.newTimerId();
      timerIds.push(timerId);
      phase.expiryTimerId = timerId;
      ctx.emit({
        type: "ArmTimer",
        runId: ctx.run.runId,
        timerId,
        at: Date.parse(request.expiresAt),
        purpose: "approvalExpiry",
      });
    } else if (timerIds[0] !== undefined) {
      phase.expiryTimerId = timerIds[0];
    }
    // Human tasks: reminders and the escalation are durable timers of the attempt.
    const notices: [string, number][] = (request.reminders ?? []).map((s, i) => [
      `reminder:${i}`,
      s,
    ]);
    if (request.escalation) {
      // Group names carry no comma (GROUP_PATTERN): the timer says whom to add.
      const to = request.escalation.to.join(",");
      notices.push([`escalation:${to}`, request.escalation.afterSeconds]);
    }
    for (const [what, seconds] of notices) {
      const timerId = ctx.newTimerId();
      (phase.noticeTimers ??= {})[timerId] = what;
      ctx.emit({
        type: "ArmTimer",
        runId: ctx.run.runId,
        timerId,
        at: ctx.now + Math.round(seconds * 1000),
        purpose: "approvalNotice",
      });
    }
  }
  ctx.setPhase(phase);
  const effect: Extract<Parameters<typeof ctx.emit>[0], { type: "RunTask" }> = {
    type: "RunTask",
    runId: ctx.run.runId,
    taskId,
    operationKey: key,
    stateName: ctx.frame.name,
    resource: state.Resource,
    input,
    attempt,
  };
  if (timeoutSeconds !== undefined) effect.timeoutSeconds = timeoutSeconds;
  if (heartbeatSeconds !== undefined) effect.heartbeatSeconds = heartbeatSeconds;
  if (token !== undefined) effect.taskToken = token;
  if (state.Credentials) effect.credentials = state.Credentials;
  if (request) effect.approval = request;
  ctx.emit(effect);
}

/** What ApprovalRequested records: the envelope and its hash, so history alone can be checked. */
function envelopeDetails(request: ApprovalRequest): HistoryDetails["ApprovalRequested"] {
  const { approvalId, envelopeHash, executionId, stateName, enteredEventId, subject } = request;
  const { details, approvers, requiredApprovals, policy, expiresAt } = request;
  return {
    approvalId,
    envelopeHash,
    executionId,
    stateName,
    enteredEventId,
    subject,
    details: JSON.stringify(details),
    approvers,
    requiredApprovals,
    policy,
    expiresAt,
    // Human tasks (present only when used, so older envelopes read as before).
    ...(request.responseSchemaHash !== undefined
      ? {
          responseSchemaHash: request.responseSchemaHash,
          responseSchema: JSON.stringify(request.responseSchema ?? null),
        }
      : {}),
    ...(request.editable !== undefined ? { editable: request.editable } : {}),
    ...(request.assignees !== undefined ? { assignees: request.assignees } : {}),
    ...(request.dueAt !== undefined ? { dueAt: request.dueAt } : {}),
    ...(request.reminders !== undefined ? { reminders: request.reminders } : {}),
    ...(request.escalation !== undefined ? { escalation: request.escalation } : {}),
  };
}

/**
 * An approval's reminder or escalation fired while it was pending (the attempt's
 * end cancels them): recorded in the history, and the driver notifies (webhook)
 * and, escalating, adds the groups to those who may decide.
 */
function noticeFired(
  ctx: StepContext,
  phase: Extract<Phase, { kind: "task" }>,
  timerId: string,
): void {
  const what = phase.noticeTimers![timerId]!;
  const { [timerId]: _, ...rest } = phase.noticeTimers!;
  ctx.setPhase({ ...phase, noticeTimers: rest });
  if (!phase.token) return;
  const approvalId = approvalIdOf(phase.token);
  if (what.startsWith("escalation:")) {
    const groups = what.slice("escalation:".length).split(",");
    ctx.record("ApprovalEscalated", { approvalId, groups });
    ctx.emit({
      type: "NoticeApproval",
      runId: ctx.run.runId,
      approvalId,
      event: "approval.escalated",
      groups,
    });
  } else {
    const reminder = Number(what.slice("reminder:".length));
    ctx.record("ApprovalReminded", { approvalId, reminder });
    ctx.emit({
      type: "NoticeApproval",
      runId: ctx.run.runId,
      approvalId,
      event: "approval.reminder",
      groups: [],
    });
  }
}

/** Forgets the attempt's task (a timeout, a stop); an approval's record leaves PENDING with it. */
export function cancelTask(
  runId: string,
  resource: string,
  phase: Extract<Phase, { kind: "task" }>,
): Extract<Effect, { type: "CancelTask" }> {
  const cancel: Extract<Effect, { type: "CancelTask" }> = {
    type: "CancelTask",
    runId,
    taskId: phase.taskId,
  };
  if (phase.token) {
    cancel.taskToken = phase.token;
    if (isApprovalResource(resource)) cancel.approvalId = approvalIdOf(phase.token);
  }
  return cancel;
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
    ...Object.keys(phase.noticeTimers ?? {}),
  ]) {
    ctx.emit({ type: "CancelTimer", runId: ctx.run.runId, timerId });
  }
}

function failAttempt(ctx: StepContext, state: TaskState, error: string, cause: string): void {
  const phase = ctx.frame.phase;
  settle(ctx);
  if (phase.kind === "task") ctx.emit(cancelTask(ctx.run.runId, state.Resource, phase));
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
    let text = JSON.stringify(output);
    if (ctx.goesByReference(text)) {
      // Stored once; the state reads into it as it would the value (core/payload-ref.ts).
      output = ctx.storePayload(text, output) as unknown as Json;
      text = JSON.stringify(output);
    }
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
    handleStateError(ctx, state, new StatesError(error, cause));
  },

  onTaskStarted(ctx, state, workerName) {
    recordStarted(ctx, state, workerName);
  },

  onTaskSubmitted(ctx, state, output) {
    recordSubmitted(ctx, state, JSON.stringify(output));
  },

  onApprovalDecided(ctx, state, event) {
    const { decision } = event;
    ctx.record("ApprovalDecided", {
      approvalId: event.approvalId,
      envelopeHash: event.envelopeHash,
      approver: decision.approver,
      decision: decision.decision,
      comment: decision.comment,
      decidedAt: decision.decidedAt,
      status: event.status,
      ...(decision.response !== undefined ? { response: JSON.stringify(decision.response) } : {}),
      ...(decision.patch !== undefined ? { patch: JSON.stringify(decision.patch) } : {}),
    });
    if (event.status === "APPROVED") {
      const output: { [key: string]: Json } = {
        decision: "APPROVED",
        approvalId: event.approvalId,
        envelopeHash: event.envelopeHash,
        decisions: event.decisions,
      };
      // Human tasks: the answer to the form, and an EDIT's details and patch.
      if (event.response !== undefined) output.response = event.response;
      if (event.edit !== undefined) {
        output.details = event.edit.details;
        output.patch = event.edit.patch;
      }
      task.onTaskSucceeded!(ctx, state, output);
    } else if (event.status === "REJECTED") {
      task.onTaskFailed!(ctx, state, "Stepwise.ApprovalRejected", JSON.stringify(event.decisions));
    }
  },

  onApprovalNoted(ctx, _state, event) {
    ctx.record(event.kind, {
      ...event.details,
      approvalId: event.approvalId,
      by: event.by,
    } as never);
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
    } else if (phase.kind === "task" && phase.noticeTimers?.[timerId] !== undefined) {
      noticeFired(ctx, phase, timerId);
    } else if (phase.kind === "task" && phase.expiryTimerId === timerId) {
      failAttempt(
        ctx,
        state,
        "Stepwise.ApprovalExpired",
        "Nobody decided the approval before it expired.",
      );
    } else if (phase.kind === "task" && phase.timerIds.includes(timerId)) {
      failAttempt(ctx, state, "States.Timeout", "The task timed out.");
    } else if (phase.kind === "task" && phase.heartbeatTimerId === timerId) {
      // AWS documents States.HeartbeatTimeout, but its recorded executions fail a
      // missed heartbeat with States.Timeout (task-cases: test_heartbeat_no_timeout).
      failAttempt(ctx, state, "States.Timeout", "The task did not send a heartbeat in time.");
    }
  },
};
