import type { RunEvent } from "../engine/core/events.js";
import type { Json } from "../engine/core/json.js";
import { replaySteps } from "../engine/replay.js";
import type { step } from "../engine/step.js";
import { RuntimeError, type ExecutionRecord } from "./contract.js";

/**
 * Redrive (AWS's RedriveExecution): a FAILED, TIMED_OUT or ABORTED execution
 * ended within the last 14 days runs again from the state it ended in, in the
 * same execution: its history goes on with ExecutionRedriven, its redrive count
 * goes up, and it keeps its variables and everything it did before.
 *
 * Which state, and with which input: the journal replayed through the pure `step`
 * gives the top level's frame before the step that ended it. A Map or Parallel
 * state runs again whole (AWS runs only a Map's failed iterations again: not yet).
 */
export const REDRIVE_WINDOW_MS = 14 * 24 * 3600 * 1000;
const REDRIVABLE = new Set(["FAILED", "TIMED_OUT", "ABORTED"]);

export function checkRedrivable(record: ExecutionRecord, now: number): void {
  if (!REDRIVABLE.has(record.status)) {
    throw new RuntimeError(
      "ExecutionNotRedrivable",
      `Execution '${record.executionId}' is ${record.status}: only FAILED, TIMED_OUT or ABORTED executions can be redriven`,
    );
  }
  if (record.stoppedAt && now - Date.parse(record.stoppedAt) > REDRIVE_WINDOW_MS) {
    throw new RuntimeError(
      "ExecutionNotRedrivable",
      `Execution '${record.executionId}' ended more than 14 days ago (${record.stoppedAt})`,
    );
  }
}

/** The state the top level ended in and the input it entered it with. */
export function redrivePoint(
  program: Parameters<typeof step>[0],
  context: Parameters<typeof step>[1],
  journal: readonly { runId: string; event: RunEvent }[],
): { state: string; input: Json } {
  let last: { state: string; input: Json } | undefined;
  for (const { runId, result } of replaySteps(program, context, journal)) {
    if (runId === context.executionId && result.run.current) {
      last = { state: result.run.current.name, input: result.run.current.input };
    }
  }
  if (!last) {
    throw new RuntimeError(
      "ExecutionNotRedrivable",
      `Execution '${context.executionId}' ended before it entered any state`,
    );
  }
  return last;
}
