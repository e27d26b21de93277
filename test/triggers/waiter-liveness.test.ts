import { describe, expect, it } from "vitest";
import {
  FIRST_CHECK_MS,
  MAX_CHECK_MS,
  nextCheckAt,
  stillRuns,
} from "../../runtime/triggers/events/waiter-liveness.js";

/** When the workers' loop looks whether a parked wait's execution still runs (pure). */
describe("waiter liveness", () => {
  it("looks soon after a wait parks, then backs off with its age, at most hourly", () => {
    const since = 1_000_000;
    expect(nextCheckAt(since, since)).toBe(since + FIRST_CHECK_MS);
    expect(nextCheckAt(since, since + 2_000)).toBe(since + 4_000);
    expect(nextCheckAt(since, since + 60_000)).toBe(since + 120_000);
    const dayOld = since + 86_400_000;
    expect(nextCheckAt(since, dayOld)).toBe(dayOld + MAX_CHECK_MS);
    // A clock that went back never schedules a look in the past.
    expect(nextCheckAt(since, since - 5_000)).toBe(since - 5_000 + FIRST_CHECK_MS);
  });

  it("running and paused executions still wait; ended ones do not", () => {
    expect(stillRuns("RUNNING")).toBe(true);
    expect(stillRuns("PAUSED")).toBe(true);
    for (const status of ["SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"])
      expect(stillRuns(status)).toBe(false);
  });
});
