import type { HistoryEvent, HistoryEventType } from "../../engine/core/history.js";
import { epochSeconds } from "./fields.js";

/**
 * GetExecutionHistory's events: a stored history event (engine/core/history.ts) in
 * the shape AWS's API returns it (API reference, "HistoryEvent"), checked against
 * the histories recorded on AWS (test/conformance/data/histories.jsonl, `npm run
 * conformance`). The stored event keeps the data; this adds what AWS says about it:
 *
 * - each input, output and set of assigned variables comes with its `…Details`
 *   (`HistoryEventExecutionDataDetails`, `AssignedVariablesDetails`): `{"truncated":
 *   false}`, "always false for API calls";
 * - `MapStateFailed` and `ParallelStateFailed` carry no details on AWS (the error is
 *   the next event's: `ExecutionFailed`, or the caught state's output), so the error
 *   Stepwise keeps with them for its own API is left out;
 * - with `includeExecutionData: false`, the data (input, output, assigned variables)
 *   and its `…Details` are left out.
 *
 * Fields of Stepwise's own (`callerName`, `operationKey`, `restartedFrom`) stay, next
 * to AWS's: clients of AWS's API ignore members they do not know.
 */

/** Per details key, the data fields and the `…Details` AWS gives each. */
const DATA_FIELDS: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  executionStartedEventDetails: [["input", "inputDetails"]],
  executionSucceededEventDetails: [["output", "outputDetails"]],
  stateEnteredEventDetails: [["input", "inputDetails"]],
  stateExitedEventDetails: [
    ["output", "outputDetails"],
    ["assignedVariables", "assignedVariablesDetails"],
  ],
  activityScheduledEventDetails: [["input", "inputDetails"]],
  activitySucceededEventDetails: [["output", "outputDetails"]],
  lambdaFunctionScheduledEventDetails: [["input", "inputDetails"]],
  lambdaFunctionSucceededEventDetails: [["output", "outputDetails"]],
  taskSubmittedEventDetails: [["output", "outputDetails"]],
  taskSucceededEventDetails: [["output", "outputDetails"]],
};

/** Events AWS writes without details, whose stored details are Stepwise's alone. */
const NO_DETAILS: ReadonlySet<HistoryEventType> = new Set<HistoryEventType>([
  "MapStateFailed",
  "ParallelStateFailed",
]);

/** `HistoryEventExecutionDataDetails` and `AssignedVariablesDetails`: nothing is ever truncated. */
const NOT_TRUNCATED = Object.freeze({ truncated: false });

/** A stored event as GetExecutionHistory shows it: epoch-seconds timestamps, data optional. */
export function awsEvent(event: HistoryEvent, includeData: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    if (value === undefined) continue;
    if (key === "timestamp") out.timestamp = epochSeconds(event.timestamp);
    else if (!key.endsWith("EventDetails")) out[key] = value;
    else if (!NO_DETAILS.has(event.type) && typeof value === "object" && value !== null) {
      out[key] = awsDetails(key, value as Record<string, unknown>, includeData);
    }
  }
  return out;
}

function awsDetails(
  key: string,
  details: Record<string, unknown>,
  includeData: boolean,
): Record<string, unknown> {
  const data = DATA_FIELDS[key] ?? [];
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(details)) {
    if (value === undefined) continue;
    const paired = data.find(([name]) => name === field);
    if (paired) {
      if (!includeData) continue;
      out[field] = value;
      out[paired[1]] = { ...NOT_TRUNCATED };
    } else if (!includeData && (field === "input" || field === "output")) {
      continue;
    } else out[field] = value;
  }
  return out;
}
