import type { RunEvent } from "../../engine/core/events.js";
import { redrivePlan, type RedrivePlan } from "../../engine/redrive.js";
import { pack } from "../store/codec.js";
import { executionTimeoutTimer, member, shortId } from "../store/ids.js";
import { RuntimeError, type ExecutionRecord } from "../contract/index.js";
import type { CreatedRun } from "../store/scripts/start-execution.js";

/**
 * Redrive (AWS's RedriveExecution): a FAILED, TIMED_OUT or ABORTED execution
 * ended within the last 14 days runs again from the state it ended in, in the
 * same execution: its history goes on with ExecutionRedriven, its redrive count
 * goes up, and it keeps its variables and everything it did before.
 *
 * Which state, and with which input: the journal replayed through the pure `step`
 * gives the top level's frame before the step that ended it (engine/redrive.ts). A
 * Map or Parallel state runs again only the children that did not succeed, each
 * from the state it ended in, as AWS's does for inline Map and Parallel states.
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

/** Where the execution runs again (engine/redrive.ts); refused when it never entered a state. */
export function redriveFrom(
  program: Parameters<typeof redrivePlan>[0],
  context: Parameters<typeof redrivePlan>[1],
  journal: readonly { runId: string; event: RunEvent }[],
): RedrivePlan {
  const plan = redrivePlan(program, context, journal);
  if (!plan) {
    throw new RuntimeError(
      "ExecutionNotRedrivable",
      `Execution '${context.executionId}' ended before it entered any state`,
    );
  }
  return plan;
}

/** The runs a redrive creates (engine/redrive.ts), as `redriveExecution` takes them. */
export function restoredRuns(plan: RedrivePlan): CreatedRun[] {
  return plan.restored.map(({ run, event }) => ({
    run: shortId(run.runId),
    state: pack(JSON.stringify(run)),
    event: JSON.stringify(event),
  }));
}

/**
 * The execution's TimeoutSeconds runs again from the redrive: AWS, "When you redrive
 * an execution, the state machine level timeout, if defined, is reset to 0." (The
 * execution's end disarmed its timer.)
 */
export function timeoutAgain(
  exec: string,
  timeoutSeconds: number | undefined,
): { member: string; at: number } | undefined {
  if (timeoutSeconds === undefined) return undefined;
  return {
    member: member.timer(executionTimeoutTimer(exec)),
    at: Date.now() + timeoutSeconds * 1000,
  };
}
