import { describe, expect, it } from "vitest";
import {
  nextTick,
  parseExpression,
  type Timing,
} from "../../runtime/triggers/schedules/schedule-expression.js";
import { ticksAfter } from "../../runtime/triggers/schedules/schedule-record.js";

/** Where a new or replaced schedule's ticks begin (schedule-record.ts `ticksAfter`), pure. */
const MINUTE = 60_000;
const NOW = Date.parse("2026-06-01T12:00:30Z");
const WINDOW = 5 * MINUTE;

function rate(startMs?: number): Timing {
  return {
    expression: parseExpression("rate(1 minute)"),
    timeZone: "UTC",
    anchorMs: startMs ?? NOW,
    ...(startMs !== undefined ? { startMs } : {}),
  };
}

const first = (timing: Timing, after?: number) =>
  new Date(nextTick(timing, ticksAfter(timing, WINDOW, NOW, after))!).toISOString();

describe("ticksAfter", () => {
  it("without a StartDate, ticks begin now", () => {
    expect(first(rate())).toBe("2026-06-01T12:00:30.000Z");
  });

  it("a StartDate in the future begins there", () => {
    expect(first(rate(NOW + 10 * MINUTE))).toBe("2026-06-01T12:10:30.000Z");
  });

  it("a StartDate in the past reaches back as far as the catch-up window", () => {
    expect(first(rate(NOW - 3 * MINUTE))).toBe("2026-06-01T11:57:30.000Z");
    // An hour back: only the last 5 minutes' ticks are due, the older ones predate it.
    expect(first(rate(NOW - 60 * MINUTE))).toBe("2026-06-01T11:55:30.000Z");
  });

  it("a replaced schedule never goes back past the last tick it handled", () => {
    const timing = rate(NOW - 60 * MINUTE);
    expect(first(timing, NOW - MINUTE)).toBe("2026-06-01T12:00:30.000Z");
  });

  it("a cron reaches back the same way", () => {
    const cron: Timing = {
      expression: parseExpression("cron(0 12 * * ? *)"),
      timeZone: "UTC",
      anchorMs: NOW - 2 * MINUTE,
      startMs: NOW - 2 * MINUTE,
    };
    expect(first(cron)).toBe("2026-06-01T12:00:00.000Z");
  });
});
