import { describe, expect, it } from "vitest";
import {
  ExpressionError,
  checkTimeZone,
  nextTick,
  parseExpression,
  ticksBetween,
  type Timing,
} from "../../runtime/triggers/schedules/schedule-expression.js";
import { compactUtc, fromNaive, toNaive } from "../../runtime/triggers/schedules/zoned-time.js";

// EventBridge Scheduler's expressions and its daylight-saving rules:
// https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
// ("When the time shifts forward in Spring, your schedule invocation gets skipped if the
// cron expression falls on a non-existent date and time. When the time shifts back in the
// Fall, your schedule runs only once.")

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const at = (text: string) => Date.parse(text);

function timing(expression: string, timeZone = "UTC", extra: Partial<Timing> = {}): Timing {
  return {
    expression: parseExpression(expression),
    timeZone,
    anchorMs: at("2026-01-01T00:00:00Z"),
    ...extra,
  };
}

function ticks(expression: string, timeZone: string, from: string, count: number): string[] {
  return ticksBetween(timing(expression, timeZone), at(from), Infinity, count).map((t) => iso(t)!);
}

describe("parsing", () => {
  it.each([
    "at(2026-12-24T18:00:00)",
    "rate(1 minute)",
    "rate(5 minutes)",
    "rate(2 hours)",
    "rate(1 day)",
    "cron(0 10 * * ? *)",
    "cron(15 12 * * ? *)",
    "cron(0 18 ? * MON-FRI *)",
    "cron(0 8 1 * ? *)",
    "cron(0/15 * * * ? *)",
    "cron(0/10 * ? * MON-FRI *)",
    "cron(0/5 8-17 ? * MON-FRI *)",
    "cron(0 9 ? * 2#1 *)",
    "cron(0 12 L * ? *)",
    "cron(0 12 15W * ? 2027)",
    "cron(0 12 ? * 6L *)",
  ])("accepts %s", (expression) => {
    expect(() => parseExpression(expression)).not.toThrow();
  });

  it.each([
    ["cron(0 10 * * *)", /6/],
    ["cron(0 10 * * * *)", /exactly one of day-of-month and day-of-week/],
    ["cron(0 10 ? * ? *)", /exactly one/],
    ["cron(61 10 * * ? *)", /cron/],
    ["cron(0 10 * * ? abc)", /year/],
    ["rate(0 minutes)", /positive/],
    ["rate(5 weeks)", /minutes, hours or days/],
    ["at(2026-02-30T10:00:00)", /not a valid date/],
    ["at(2026-12-24 18:00)", /yyyy-mm-dd/],
    ["every 5 minutes", /at\(\.\.\.\)/],
  ])("refuses %s", (expression, message) => {
    expect(() => parseExpression(expression)).toThrow(message);
    try {
      parseExpression(expression);
    } catch (err) {
      expect((err as ExpressionError).field).toBe("ScheduleExpression");
    }
  });

  it("refuses an unknown time zone, naming the field", () => {
    expect(() => checkTimeZone("Mars/Olympus_Mons")).toThrow(ExpressionError);
    expect(() => checkTimeZone("Europe/Paris")).not.toThrow();
  });
});

describe("next ticks", () => {
  it("cron: EventBridge's day-of-week counts 1 = Sunday", () => {
    // 2026-03-02 is a Monday.
    expect(ticks("cron(0 18 ? * MON-FRI *)", "UTC", "2026-03-01T00:00:00Z", 3)).toEqual([
      "2026-03-02T18:00:00.000Z",
      "2026-03-03T18:00:00.000Z",
      "2026-03-04T18:00:00.000Z",
    ]);
    expect(ticks("cron(0 9 ? * 1 *)", "UTC", "2026-03-01T10:00:00Z", 1)).toEqual([
      "2026-03-08T09:00:00.000Z",
    ]);
    expect(ticks("cron(0 9 ? * 6#3 *)", "UTC", "2026-03-01T00:00:00Z", 1)).toEqual([
      "2026-03-20T09:00:00.000Z",
    ]);
    expect(ticks("cron(0 9 ? * 6L *)", "UTC", "2026-03-01T00:00:00Z", 1)).toEqual([
      "2026-03-27T09:00:00.000Z",
    ]);
    expect(ticks("cron(0 12 L * ? *)", "UTC", "2026-02-01T00:00:00Z", 2)).toEqual([
      "2026-02-28T12:00:00.000Z",
      "2026-03-31T12:00:00.000Z",
    ]);
    expect(ticks("cron(0 8 15W * ? *)", "UTC", "2026-03-01T00:00:00Z", 1)).toEqual([
      "2026-03-16T08:00:00.000Z",
    ]);
    expect(ticks("cron(30 6 1 1 ? 2028)", "UTC", "2026-03-01T00:00:00Z", 1)).toEqual([
      "2028-01-01T06:30:00.000Z",
    ]);
  });

  it("cron in a time zone: wall-clock times, the offset following the season", () => {
    expect(ticks("cron(0 9 * * ? *)", "Europe/Paris", "2026-03-27T00:00:00Z", 3)).toEqual([
      "2026-03-27T08:00:00.000Z", // CET (UTC+1)
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z", // CEST (UTC+2) from 29 March
    ]);
  });

  it("spring forward: a time that does not exist is skipped (America/New_York, 8 March 2026)", () => {
    // 02:00 → 03:00 local: 02:30 never happens that day.
    expect(ticks("cron(30 2 * * ? *)", "America/New_York", "2026-03-07T00:00:00Z", 3)).toEqual([
      "2026-03-07T07:30:00.000Z", // 02:30 EST
      "2026-03-09T06:30:00.000Z", // 02:30 EDT; 8 March has none
      "2026-03-10T06:30:00.000Z",
    ]);
  });

  it("fall back: a time that happens twice runs once (America/New_York, 1 November 2026)", () => {
    // 02:00 EDT → 01:00 EST: 01:30 happens twice; the schedule runs at the first.
    expect(ticks("cron(30 1 * * ? *)", "America/New_York", "2026-10-31T00:00:00Z", 3)).toEqual([
      "2026-10-31T05:30:00.000Z", // 01:30 EDT
      "2026-11-01T05:30:00.000Z", // 01:30 EDT, not again at 01:30 EST (06:30Z)
      "2026-11-02T06:30:00.000Z", // 01:30 EST
    ]);
    // An hourly schedule does not repeat the hour either.
    expect(ticks("cron(0 * * * ? *)", "America/New_York", "2026-11-01T04:30:00Z", 3)).toEqual([
      "2026-11-01T05:00:00.000Z", // 01:00 EDT
      "2026-11-01T07:00:00.000Z", // 02:00 EST (01:00 EST is the repeated hour)
      "2026-11-01T08:00:00.000Z",
    ]);
  });

  it("rate: fixed durations from the anchor (a day is 24 hours, DST or not)", () => {
    const t = timing("rate(1 day)", "America/New_York", { anchorMs: at("2026-03-07T12:00:00Z") });
    expect(ticksBetween(t, at("2026-03-07T00:00:00Z"), Infinity, 3).map(iso)).toEqual([
      "2026-03-07T12:00:00.000Z",
      "2026-03-08T12:00:00.000Z",
      "2026-03-09T12:00:00.000Z",
    ]);
    const five = timing("rate(5 minutes)", "UTC", { anchorMs: at("2026-03-07T12:00:00Z") });
    expect(iso(nextTick(five, at("2026-03-07T12:07:00Z")))).toBe("2026-03-07T12:10:00.000Z");
    expect(iso(nextTick(five, at("2026-03-07T12:10:00Z")))).toBe("2026-03-07T12:15:00.000Z");
  });

  it("StartDate and EndDate bound recurring schedules", () => {
    const t = timing("rate(1 hour)", "UTC", {
      anchorMs: at("2026-03-07T00:00:00Z"),
      startMs: at("2026-03-07T05:30:00Z"),
      endMs: at("2026-03-07T08:00:00Z"),
    });
    expect(ticksBetween(t, at("2026-03-07T00:00:00Z"), Infinity, 10).map(iso)).toEqual([
      "2026-03-07T06:00:00.000Z",
      "2026-03-07T07:00:00.000Z",
    ]);
  });

  it("at(): once, in the schedule's time zone", () => {
    const t = timing("at(2026-07-14T10:00:00)", "Europe/Paris");
    expect(iso(nextTick(t, at("2026-07-01T00:00:00Z")))).toBe("2026-07-14T08:00:00.000Z");
    expect(nextTick(t, at("2026-07-14T08:00:00Z"))).toBeNull();
    // In the hour skipped by spring forward: when the clock reaches it.
    const gap = timing("at(2026-03-08T02:30:00)", "America/New_York");
    expect(iso(nextTick(gap, 0))).toBe("2026-03-08T07:00:00.000Z");
  });
});

describe("zoned time", () => {
  it("maps wall times both ways", () => {
    const naive = Date.UTC(2026, 10, 1, 1, 30);
    expect(iso(fromNaive(naive, "America/New_York"))).toBe("2026-11-01T05:30:00.000Z");
    expect(fromNaive(Date.UTC(2026, 2, 8, 2, 30), "America/New_York")).toBeNull();
    expect(toNaive(at("2026-11-01T06:30:00Z"), "America/New_York")).toBe(naive);
  });

  it("names ticks compactly", () => {
    expect(compactUtc(at("2026-12-05T18:20:00Z"))).toBe("20261205T182000Z");
  });
});
