import { describe, expect, it } from "vitest";
import { RuntimeError, type ExecutionRecord } from "../../runtime/contract/index.js";
import {
  REDRIVE_WINDOW_MS,
  checkRedrivable,
  redrivability,
} from "../../runtime/executions/redrive.js";

/** Whether an execution can be redriven, as data (runtime/executions/redrive.ts). */
const NOW = Date.parse("2025-06-01T12:00:00.000Z");
const ID = "arn:aws:states:us-east-1:123456789012:execution:m:e";

function record(status: string, stoppedAt?: number): ExecutionRecord {
  return {
    executionId: ID,
    status,
    ...(stoppedAt !== undefined ? { stoppedAt: new Date(stoppedAt).toISOString() } : {}),
  } as unknown as ExecutionRecord;
}

describe("redrivability", () => {
  it("FAILED, TIMED_OUT and ABORTED executions ended within 14 days can be redriven", () => {
    for (const status of ["FAILED", "TIMED_OUT", "ABORTED"]) {
      expect(redrivability(record(status, NOW - 1000), NOW)).toEqual({ redrivable: true });
      expect(redrivability(record(status, NOW - REDRIVE_WINDOW_MS), NOW)).toEqual({
        redrivable: true,
      });
      expect(() => checkRedrivable(record(status, NOW - 1000), NOW)).not.toThrow();
    }
  });

  it("other statuses cannot, and say why", () => {
    for (const status of ["RUNNING", "PAUSED", "SUCCEEDED"]) {
      expect(redrivability(record(status), NOW)).toEqual({
        redrivable: false,
        reason: `Execution '${ID}' is ${status}: only FAILED, TIMED_OUT or ABORTED executions can be redriven`,
      });
    }
  });

  it("nor what ended more than 14 days ago", () => {
    const stoppedAt = NOW - REDRIVE_WINDOW_MS - 1;
    expect(redrivability(record("FAILED", stoppedAt), NOW)).toEqual({
      redrivable: false,
      reason: `Execution '${ID}' ended more than 14 days ago (${new Date(stoppedAt).toISOString()})`,
    });
  });

  it("checkRedrivable throws ExecutionNotRedrivable with the same reason", () => {
    for (const r of [record("SUCCEEDED"), record("ABORTED", NOW - REDRIVE_WINDOW_MS - 1)]) {
      const answer = redrivability(r, NOW);
      let thrown: unknown;
      try {
        checkRedrivable(r, NOW);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(RuntimeError);
      expect(thrown).toMatchObject({
        code: "ExecutionNotRedrivable",
        message: answer.redrivable ? undefined : answer.reason,
      });
    }
  });
});
