import { describe, expect, it } from "vitest";
import { planOps } from "../../runtime/commit/effects.js";
import { EXECUTION_ARN_PREFIX } from "../../runtime/store/ids.js";

/**
 * The end of an execution names its timeout timer for the commit to drop only
 * when one can be armed: the definition has TimeoutSeconds (runtime/executions/execution-store.ts and
 * redrive.ts arm it from nothing else). Without one, the commit skips the ZREM.
 */
const EXEC = `${EXECUTION_ARN_PREFIX}m:e`;

function end(noTimeout: boolean | undefined) {
  const run = { runId: EXEC, status: "SUCCEEDED", output: { ok: 1 } } as never;
  const ops = planOps(
    run,
    { type: "Continue", time: "", eventId: 1 },
    [{ type: "RunEnded", runId: EXEC, outcome: { status: "SUCCEEDED", output: { ok: 1 } } }],
    { now: Date.UTC(2026, 11, 2), ...(noTimeout !== undefined ? { noTimeout } : {}) },
  );
  const op = ops.find((o) => o.op === "end");
  if (op?.op !== "end") throw new Error(`no end op in ${JSON.stringify(ops)}`);
  return op;
}

describe("the end op", () => {
  it("names the execution's timeout timer unless the definition has no TimeoutSeconds", () => {
    expect(end(undefined).timeoutMember).toBe("t:m:e#timeout");
    expect(end(false).timeoutMember).toBe("t:m:e#timeout");
    expect(end(true)).not.toHaveProperty("timeoutMember");
    expect(end(true)).toMatchObject({ exec: "m:e", status: "SUCCEEDED", output: '{"ok":1}' });
  });
});
