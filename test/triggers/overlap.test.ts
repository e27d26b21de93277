import { describe, expect, it } from "vitest";
import {
  catchUp,
  decideOverlap,
  type OverlapPolicy,
} from "../../runtime/triggers/schedules/overlap.js";

// The overlap policies and catch-up window are tested here, on the pure decision, rather
// than end to end: a rate(1 minute) schedule overlapping a long run would take minutes.
// Semantics after Temporal Schedules (https://docs.temporal.io/schedule#overlap-policy).

describe("overlap policies", () => {
  const cases: [OverlapPolicy, boolean, boolean, string][] = [
    // policy, previous still running, a tick already buffered → decision
    ["SKIP", false, false, "start"],
    ["SKIP", true, false, "skip"],
    ["BUFFER_ONE", false, false, "start"],
    ["BUFFER_ONE", true, false, "buffer"],
    ["BUFFER_ONE", true, true, "skip"],
    ["ALLOW_ALL", true, false, "start"],
    ["ALLOW_ALL", false, false, "start"],
    ["CANCEL_OTHER", true, false, "cancel-then-start"],
    ["CANCEL_OTHER", false, false, "start"],
  ];
  it.each(cases)(
    "%s, running %s, buffered %s → %s",
    (policy, previousRunning, buffered, decision) => {
      expect(decideOverlap(policy, { previousRunning, buffered })).toBe(decision);
    },
  );
});

describe("catch-up window", () => {
  it("starts the ticks within the window and records the others as missed", () => {
    const now = 10 * 60_000;
    const ticks = [0, 60_000, 5 * 60_000, 9 * 60_000, 10 * 60_000];
    expect(catchUp(ticks, now, 5 * 60_000)).toEqual({
      due: [5 * 60_000, 9 * 60_000, 10 * 60_000],
      missed: [0, 60_000],
    });
    expect(catchUp(ticks, now, 0)).toEqual({
      due: [10 * 60_000],
      missed: [0, 60_000, 5 * 60_000, 9 * 60_000],
    });
  });
});
