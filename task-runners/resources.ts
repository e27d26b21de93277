import { isApprovalResource, isParkResource } from "../engine/states/approval.js";

/**
 * How the runtime treats a Task state's `Resource`, decided when the task is
 * scheduled (inside the commit), before any runner is involved:
 *  - `call`: a worker calls a runner (function, HTTP, …) in a task job;
 *  - `activity`: the task waits until an activity worker polls for it
 *    (`getActivityTask`), then completes through the task-token callbacks;
 *  - `park`: nothing is called; the execution waits for a callback on its token
 *    (the built-in approval resource).
 * `.waitForTaskToken` on a `call` resource calls the runner with the token and
 * then waits for the callback (AWS "Wait for a Callback with Task Token").
 */
export type TaskMode = "call" | "activity" | "park";

const SUFFIX = /\.(waitForTaskToken|sync(:2)?)$/;

/** The resource without its integration-pattern suffix. */
export function bareResource(resource: string): string {
  return resource.replace(SUFFIX, "");
}

export function waitsForCallback(resource: string): boolean {
  return resource.endsWith(".waitForTaskToken") || isEventWait(resource) || waitsForChild(resource);
}

/** How a `states:startExecution` task treats its child (runtime/children/). */
export type ChildPattern = "start" | "sync" | "sync:2" | "waitForTaskToken";

const CHILD =
  /^arn:aws[a-z-]*:states:::states:startExecution(?:\.(sync:2|sync|waitForTaskToken))?$/;

/** `arn:aws:states:::states:startExecution[.sync|.sync:2|.waitForTaskToken]`, else undefined. */
export function childPattern(resource: string): ChildPattern | undefined {
  const match = CHILD.exec(resource);
  if (!match) return undefined;
  return (match[1] as ChildPattern | undefined) ?? "start";
}

export function isChildExecution(resource: string): boolean {
  return childPattern(resource) !== undefined;
}

/**
 * `.sync` / `.sync:2` of `states:startExecution`: the runner starts the child and the
 * task waits on a token of the runtime's (the engine gives none), answered when the
 * child ends (runtime/children/child-watch.ts).
 */
export function waitsForChild(resource: string): boolean {
  const pattern = childPattern(resource);
  return pattern === "sync" || pattern === "sync:2";
}

/**
 * `[arn:aws:states:::]stepwise:waitForEvent`: called (its runner registers the task's
 * token with the event bus, runtime/triggers/events/event-waits.ts), then waits for the token
 * like `.waitForTaskToken`, whose callback is the matching event or a timeout.
 */
export function isEventWait(resource: string): boolean {
  return (
    resource === "stepwise:waitForEvent" || resource === "arn:aws:states:::stepwise:waitForEvent"
  );
}

/** `activity:<name>` or an AWS activity ARN `arn:aws:states:<region>:<account>:activity:<name>`. */
export function activityName(resource: string): string | undefined {
  const bare = bareResource(resource);
  const arn = /^arn:[^:]+:states:[^:]*:[^:]*:activity:(.+)$/.exec(bare);
  if (arn) return arn[1];
  return bare.startsWith("activity:") ? bare.slice("activity:".length) : undefined;
}

/** The approval resource: `[arn:aws:states:::]stepwise:approval`, any suffix (engine/states/approval.ts). */
export function isApproval(resource: string): boolean {
  return isApprovalResource(resource);
}

export function taskMode(resource: string): TaskMode {
  if (isEventWait(resource)) return "call";
  // Approvals, and `stepwise:waitForTaskToken` (a plain callback), are parked.
  if (isParkResource(resource)) return "park";
  if (activityName(resource) !== undefined) return "activity";
  return "call";
}
