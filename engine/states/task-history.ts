import type { TaskState } from "../core/definition.js";
import type { Json } from "../core/json.js";
import type { StepContext } from "../step-context.js";

/**
 * How AWS splits a resource ARN in history events: `arn:aws:states:::lambda:invoke`
 * is resourceType `lambda`, resource `invoke`; anything else keeps its own prefix.
 */
export function describeResource(resource: string): { resourceType: string; resource: string } {
  // AWS SDK integrations keep the service with the type: `aws-sdk:s3`, `getObject`.
  const sdk = /^arn:[^:]+:states:[^:]*:[^:]*:(aws-sdk:[^:]+):(.+)$/.exec(resource);
  if (sdk) return { resourceType: sdk[1]!, resource: sdk[2]! };
  const m = /^arn:[^:]+:states:[^:]*:[^:]*:([^:]+):(.+)$/.exec(resource);
  if (m) return { resourceType: m[1]!, resource: m[2]! };
  const lambda = /^arn:[^:]+:lambda:[^:]*:[^:]*:function:(.+)$/.exec(resource);
  if (lambda) return { resourceType: "lambda", resource: resource };
  const i = resource.indexOf(":");
  return i > 0
    ? { resourceType: resource.slice(0, i), resource: resource.slice(i + 1) }
    : { resourceType: "function", resource };
}

/**
 * The region a TaskScheduled event names. AWS names the region a service
 * integration calls; so does Stepwise for the AWS resources its AWS runner calls
 * (`arn:aws:states:…` other than Stepwise's own `stepwise:` ones): the resource's
 * own region, else the deployment's (the region of the state machine's ARN,
 * STEPWISE_AWS_REGION). Everything else runs here: `local`.
 */
export function scheduledRegion(resource: string, stateMachineId: string): string {
  const m = /^arn:[^:]+:states:([^:]*):[^:]*:([^:]+):/.exec(resource);
  if (!m || m[2] === "stepwise" || m[2] === "activity") return "local";
  if (m[1]) return m[1];
  const own = /^arn:[^:]+:states:([^:]+):/.exec(stateMachineId);
  return own?.[1] ?? "local";
}

/**
 * The history a Task state writes, named as AWS names it for its resource:
 * activities (`arn:…:activity:name`, or our `activity:name`) get Activity*
 * events, and the worker that takes the task is recorded when it takes it
 * (ActivityStarted); legacy Lambda ARNs (`arn:aws:lambda:…:function:name`) get
 * LambdaFunction* events; everything else (service integrations, `function:`,
 * `http:invoke`, approvals) gets Task* events with resourceType/resource.
 */
export type TaskKind = "activity" | "lambda" | "task";

export function taskKind(resource: string): TaskKind {
  if (/^arn:[^:]+:states:[^:]*:[^:]*:activity:./.test(resource) || /^activity:./.test(resource)) {
    return "activity";
  }
  if (/^arn:[^:]+:lambda:[^:]*:[^:]*:function:./.test(resource)) return "lambda";
  return "task";
}

export function recordScheduled(
  ctx: StepContext,
  state: TaskState,
  parameters: string,
  timeoutInSeconds: number | undefined,
  heartbeatInSeconds: number | undefined,
  /** Stepwise's: the key the task is called with (core/operation-key.ts), next to AWS's fields. */
  operationKey: string,
): void {
  switch (taskKind(state.Resource)) {
    case "activity":
      // ActivityStarted waits for a worker to take the task (the TaskStarted event).
      ctx.record("ActivityScheduled", {
        resource: state.Resource,
        input: parameters,
        timeoutInSeconds,
        heartbeatInSeconds,
        operationKey,
      });
      return;
    case "lambda":
      ctx.record("LambdaFunctionScheduled", {
        resource: state.Resource,
        input: parameters,
        timeoutInSeconds,
        operationKey,
      });
      ctx.record("LambdaFunctionStarted");
      return;
    case "task": {
      const described = describeResource(state.Resource);
      ctx.record("TaskScheduled", {
        ...described,
        region: scheduledRegion(state.Resource, ctx.execution.stateMachineId),
        parameters,
        timeoutInSeconds,
        heartbeatInSeconds,
        operationKey,
      });
      ctx.record("TaskStarted", described);
    }
  }
}

/** An activity worker took the task. */
export function recordStarted(
  ctx: StepContext,
  state: TaskState,
  workerName: string | undefined,
): void {
  if (taskKind(state.Resource) !== "activity") return;
  ctx.record("ActivityStarted", workerName !== undefined ? { workerName } : {});
}

/** A `.waitForTaskToken` call returned; the token's answer completes the task. */
export function recordSubmitted(ctx: StepContext, state: TaskState, output: string): void {
  if (taskKind(state.Resource) !== "task") return;
  ctx.record("TaskSubmitted", { ...describeResource(state.Resource), output });
}

export function recordSucceeded(ctx: StepContext, state: TaskState, output: string): void {
  switch (taskKind(state.Resource)) {
    case "activity":
      ctx.record("ActivitySucceeded", { output });
      return;
    case "lambda":
      ctx.record("LambdaFunctionSucceeded", { output });
      return;
    case "task":
      ctx.record("TaskSucceeded", { ...describeResource(state.Resource), output });
  }
}

export function recordFailed(
  ctx: StepContext,
  state: TaskState,
  error: string,
  cause: string | undefined,
  timedOut = false,
): void {
  const details: { error: string; cause?: string } = { error };
  if (cause !== undefined) details.cause = cause;
  switch (taskKind(state.Resource)) {
    case "activity":
      ctx.record(timedOut ? "ActivityTimedOut" : "ActivityFailed", details);
      return;
    case "lambda":
      ctx.record(timedOut ? "LambdaFunctionTimedOut" : "LambdaFunctionFailed", details);
      return;
    case "task":
      ctx.record(timedOut ? "TaskTimedOut" : "TaskFailed", {
        ...describeResource(state.Resource),
        ...details,
      });
  }
}
