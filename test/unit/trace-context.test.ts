import { describe, expect, it } from "vitest";
import { runParentSpanId, spanId, spanIds } from "../../runtime/tracing/span-ids.js";
import {
  formatTraceparent,
  newTrace,
  ownTrace,
  parseTraceparent,
  traceOfRecord,
} from "../../runtime/tracing/trace-context.js";

const T = "4bf92f3577b34da6a3ce929d0e0e4736";
const S = "00f067aa0ba902b7";

describe("parseTraceparent (W3C Trace Context)", () => {
  it.each([
    ["a version 00 header", `00-${T}-${S}-01`, { traceId: T, parentSpanId: S }],
    ["surrounding blanks", ` 00-${T}-${S}-00 `, { traceId: T, parentSpanId: S }],
    [
      "a later version with more fields",
      `01-${T}-${S}-01-what-next`,
      { traceId: T, parentSpanId: S },
    ],
  ])("reads %s", (_what, header, expected) => {
    expect(parseTraceparent(header)).toEqual(expected);
  });

  it.each([
    ["absent", undefined],
    ["version ff", `ff-${T}-${S}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${S}-01`],
    ["an all-zero span id", `00-${T}-${"0".repeat(16)}-01`],
    ["version 00 with more fields", `00-${T}-${S}-01-x`],
    ["a short trace id", `00-${T.slice(1)}-${S}-01`],
    ["upper-case hex", `00-${T.toUpperCase()}-${S}-01`],
    ["two headers", [`00-${T}-${S}-01`, `00-${T}-${S}-01`]],
    ["two headers joined", `00-${T}-${S}-01, 00-${T}-${S}-01`],
  ])("refuses %s (a new trace is started instead)", (_what, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it("keeps a printable tracestate and drops one that is not", () => {
    expect(parseTraceparent(`00-${T}-${S}-01`, "a=1,b=2")?.traceState).toBe("a=1,b=2");
    expect(parseTraceparent(`00-${T}-${S}-01`, "a=\u0001")?.traceState).toBeUndefined();
    expect(parseTraceparent(`00-${T}-${S}-01`, "x".repeat(513))?.traceState).toBeUndefined();
  });

  it("formats what it reads", () => {
    expect(parseTraceparent(formatTraceparent(T, S))).toEqual({ traceId: T, parentSpanId: S });
  });
});

describe("trace ids", () => {
  it("are random and valid when made", () => {
    const a = newTrace().traceId;
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(newTrace().traceId).not.toBe(a);
  });

  it("are derived from the ARN and start time, stably, for records that keep none", () => {
    const arn = "arn:aws:states:us-east-1:123456789012:execution:m:e";
    const t0 = "2026-12-02T07:32:25.447Z";
    const own = traceOfRecord(arn, t0, null).traceId;
    expect(traceOfRecord(arn, t0, undefined).traceId).toBe(own);
    expect(ownTrace(arn, t0).traceId).toBe(own);
    expect(own).toMatch(/^[0-9a-f]{32}$/);
    // The same name started again after a purge is another trace.
    expect(traceOfRecord(arn, "2026-12-02T07:32:25.448Z", null).traceId).not.toBe(own);
    expect(traceOfRecord(`${arn}x`, t0, null).traceId).not.toBe(own);
    expect(traceOfRecord(arn, t0, T, S, "a=1")).toEqual({
      traceId: T,
      parentSpanId: S,
      traceState: "a=1",
    });
  });
});

describe("span ids", () => {
  it("are deterministic, distinct per fact and per trace", () => {
    expect(spanId(T, "state", "r", 3)).toBe(spanId(T, "state", "r", 3));
    expect(spanId(T, "state", "r", 3)).not.toBe(spanId(T, "state", "r", 4));
    expect(spanId(T, "a", "bc")).not.toBe(spanId(T, "ab", "c"));
    expect(spanIds.execution(T)).not.toBe(spanIds.execution(newTrace().traceId));
    expect(spanIds.attempt(T, "t#1")).toMatch(/^[0-9a-f]{16}$/);
  });

  it("hang a child run under its Map or Parallel state's join, the root under the execution", () => {
    const arn = "arn:aws:states:us-east-1:123456789012:execution:m:e";
    expect(runParentSpanId(T, arn, arn)).toBe(spanIds.execution(T));
    expect(runParentSpanId(T, `${arn}/4/1`, arn)).toBe(spanIds.join(T, `${arn}/4`));
    expect(runParentSpanId(T, `${arn}/4/1/2/0`, arn)).toBe(spanIds.join(T, `${arn}/4/1/2`));
  });
});
