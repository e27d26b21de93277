import type { Json } from "../../engine/core/json.js";
import { stateMachineArn } from "../../runtime/store/ids.js";
import { parseStateMachineArn } from "./arns.js";
import { executionName, resultFields, startTarget } from "./executions.js";
import { jsonString, optionalEnum, requiredString, type Body } from "./fields.js";
import type { ActionTable, AwsContext } from "./protocol.js";
import { ours } from "./state-machines.js";

/**
 * StartSyncExecution: an EXPRESS machine run to its end in this process (at most
 * five minutes), answered with its outcome; nothing of it is stored.
 */

/** AWS bills Express duration in 100 ms steps and memory in 64 MB steps. */
function billing(startMs: number, stopMs: number) {
  const ms = Math.max(0, stopMs - startMs);
  return {
    billedMemoryUsedInMB: 64,
    billedDurationInMilliseconds: Math.max(100, Math.ceil(ms / 100) * 100),
  };
}

async function startSync(body: Body, ctx: AwsContext): Promise<unknown> {
  const ref = ours(parseStateMachineArn(requiredString(body, "stateMachineArn")));
  const name = executionName(body);
  const input = jsonString(body, "input", "InvalidExecutionInput", {}) as Json;
  const metadataOnly =
    optionalEnum(body, "includedData", ["ALL_DATA", "METADATA_ONLY"] as const) === "METADATA_ONLY";
  const target = await startTarget(ref, ctx);
  const r = await ctx.runtime.startSyncExecution(ref.name, {
    input,
    ...(name !== undefined ? { name } : {}),
    ...(ctx.trace ? { trace: ctx.trace } : {}),
    ...target,
  });
  // Each instant parsed once: the dates and the billed duration come from both.
  const startMs = Date.parse(r.startedAt);
  const stopMs = Date.parse(r.stoppedAt);
  const out: Record<string, unknown> = {
    executionArn: r.executionId,
    stateMachineArn: stateMachineArn(ref.name),
    name: r.name,
    startDate: startMs / 1000, // epoch seconds, as fields.ts epochSeconds answers
    stopDate: stopMs / 1000,
    // SyncExecutionStatus has no ABORTED: an Express run is stopped only by failing.
    status: r.status === "ABORTED" ? "FAILED" : r.status,
    billingDetails: billing(startMs, stopMs),
  };
  // The data fields after these, as a spread would put them, without a third object.
  return Object.assign(out, resultFields(r, metadataOnly));
}

export const expressActions: ActionTable = {
  StartSyncExecution: { permission: "executions:write", run: startSync },
};
