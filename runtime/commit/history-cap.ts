import type { RunEvent } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";

/**
 * The history quota (AWS Step Functions: a hard 25,000 events per execution, "Avoid
 * reaching the history quota" in the developer guide). AWS lets the execution
 * reach 24,999 events; event 25,000 may be `ExecutionSucceeded`, and otherwise the
 * execution fails there with `ExecutionFailed`. AWS does not document the error
 * name; Stepwise uses `States.Runtime`, its name for an execution the service
 * cannot go on with, which no Retry or Catch matches (flow/errors-match.ts), so a
 * Map iteration that hits the quota fails its whole execution as AWS's does.
 *
 * Decided in TypeScript before the commit (the worker knows the count `hc` it
 * loaded), so the Lua commit and its fences stay as they are.
 */
export const HISTORY_CAP_ERROR = "States.Runtime";

/**
 * Whether committing `history` on top of `hc` events goes past what the quota
 * allows: the events must leave room for the execution's last event, unless they
 * end the execution themselves within the cap.
 */
export function exceedsHistoryCap(
  hc: number,
  history: readonly HistoryEvent[],
  cap: number,
): boolean {
  const total = hc + history.length;
  if (total < cap) return false;
  const last = history[history.length - 1];
  const ends =
    last !== undefined &&
    (last.type === "ExecutionSucceeded" ||
      last.type === "ExecutionFailed" ||
      last.type === "ExecutionAborted" ||
      last.type === "ExecutionTimedOut");
  return !(ends && total <= cap);
}

/** The event that replaces a transition the quota refuses: the run fails with States.Runtime. */
export function historyCapStop(cap: number, hc: number, stamped: RunEvent): RunEvent {
  return {
    type: "Stop",
    status: "FAILED",
    error: HISTORY_CAP_ERROR,
    cause: `The execution reached ${hc} history events; its next transition would pass the limit of ${cap} (STEPWISE_MAX_HISTORY_EVENTS; AWS's quota is 25,000)`,
    time: stamped.time,
    eventId: stamped.eventId,
  };
}
