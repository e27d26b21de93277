import { describe, expect, it } from "vitest";
import { HISTORY_FORMAT_AWS } from "../../engine/core/history.js";
import {
  compareHistories,
  compareHistory,
  compareValue,
  historyReport,
  normaliseParallel,
  parseHistories,
  type Event,
} from "./histories.js";
import { loadCases, readConformanceFile } from "./load.js";

/**
 * Whole histories recorded on AWS (data/histories.jsonl) against the ones Stepwise
 * writes in AWS's history format, shaped by the AWS endpoint's mapping (api/aws/history.ts).
 * `npm run conformance` prints the same comparison with each difference.
 */

/**
 * Identical histories reached (issues 36 and 37: a Distributed Map's items run as child
 * executions, so the parent's history holds only the Map Run's events): a change that
 * loses one fails here. The two left link one event differently in a way the
 * recordings do not explain (data/README.md, "Remaining differences").
 */
const IDENTICAL_FLOOR = 223;

describe("execution histories recorded on AWS", () => {
  it(`are identical for at least ${IDENTICAL_FLOOR} of the 225, the rest being Distributed Map Runs`, async () => {
    const recorded = parseHistories(readConformanceFile("histories.jsonl"));
    expect(recorded).toHaveLength(225);
    const results = await compareHistories(recorded, loadCases("cases.jsonl"), {
      run: { historyFormat: HISTORY_FORMAT_AWS },
    });
    const identical = results.filter((r) => r.identical).length;
    const report = historyReport(results).join("\n");
    expect(identical, report).toBeGreaterThanOrEqual(IDENTICAL_FLOOR);
    // The known gap (data/README.md): how a DISTRIBUTED Map's exit links to its Map Run.
    const others = results.filter((r) => !r.identical && !r.distributed);
    expect(others.map((r) => `${r.id}: ${r.difference?.kind}`)).toEqual([]);
  });

  it("compare nothing at all when the mapping drops a field AWS records", async () => {
    // The comparison can fail: the endpoint's shape without its `…Details` matches none.
    const recorded = parseHistories(readConformanceFile("histories.jsonl")).slice(0, 5);
    const results = await compareHistories(recorded, loadCases("cases.jsonl"), {
      run: { historyFormat: HISTORY_FORMAT_AWS },
      mapEvent: (e) => ({ ...e }),
    });
    expect(results.filter((r) => r.identical)).toEqual([]);
    expect(results[0]!.difference).toMatchObject({
      kind: "missing ExecutionStarted.executionStartedEventDetails.inputDetails",
      event: 1,
    });
  });
});

describe("the comparison rules (data/README.md, histories.jsonl)", () => {
  it("match a recorded placeholder with any value", () => {
    expect(compareValue({ roleArn: "snf_role_arn" }, { roleArn: "arn:aws:iam::1:role/r" })).toBe(
      undefined,
    );
    expect(compareValue("map_run_arn", "arn:aws:states:x")).toBe(undefined);
    expect(compareValue("arn:<partition>:states:<region>:1:mapRun:<ArnPart_0idx>", "x")).toBe(
      undefined,
    );
    expect(compareValue({ id: "<uuid:1>" }, { id: "3f0c…" })).toBe(undefined);
    // Not a placeholder: a different value differs.
    expect(compareValue("input_value_literal", "other")).toMatchObject({ what: "value" });
  });

  it("match a masked date-time only with a date-time", () => {
    expect(compareValue({ t: "date" }, { t: "2016-03-14T01:59:00Z" })).toBe(undefined);
    expect(compareValue({ t: "timestamp" }, { t: "2016-12-05T25:29:29Z" })).toBe(undefined);
    expect(compareValue({ t: "date" }, { t: "yesterday" })).toMatchObject({ path: "t" });
  });

  it("compare a string holding JSON by its parsed value, either side", () => {
    expect(compareValue({ output: [1, 2] }, { output: "[1,2]" })).toBe(undefined);
    expect(compareValue({ output: "[1, 2]" }, { output: "[1,2]" })).toBe(undefined);
    expect(compareValue({ output: "[1,2]" }, { output: [1, 2] })).toBe(undefined);
    expect(compareValue({ v: '"x"' }, { v: '"x"' })).toBe(undefined);
    // A JSON string is not its unquoted text, and 1.0 is 1.
    expect(compareValue({ v: '"x"' }, { v: "x" })).toMatchObject({ what: "value" });
    expect(compareValue({ n: 1 }, { n: "1.0" })).toBe(undefined);
    expect(compareValue({ output: [1, 2] }, { output: "[2,1]" })).toMatchObject({
      path: "output[0]",
    });
  });

  it("count a field one side lacks, whichever side", () => {
    expect(compareValue({ a: 1, b: { truncated: false } }, { a: 1 })).toEqual({
      path: "b",
      what: "missing",
      expected: { truncated: false },
    });
    expect(compareValue({ a: 1 }, { a: 1, cause: "" })).toEqual({
      path: "cause",
      what: "extra",
      actual: "",
    });
  });

  it("reports the first differing event, and a missing or extra one", () => {
    const e = (id: number, previousEventId: number, type: string): Event => ({
      id,
      previousEventId,
      type,
    });
    const recorded = [e(1, 0, "ExecutionStarted"), e(2, 0, "PassStateEntered")];
    expect(
      compareHistory(recorded, [e(1, 0, "ExecutionStarted"), e(2, 1, "PassStateEntered")]),
    ).toMatchObject({
      kind: "previousEventId of PassStateEntered",
      event: 2,
      expected: 0,
      actual: 1,
    });
    expect(compareHistory(recorded, recorded.slice(0, 1))).toMatchObject({
      kind: "missing event PassStateEntered",
      event: 2,
    });
    expect(compareHistory(recorded, [...recorded, e(3, 2, "PassStateExited")])).toMatchObject({
      kind: "extra event PassStateExited",
    });
  });

  it("rewrite Parallel branches as LocalStack's recording tool did, quirk included", () => {
    const e = (id: number, type: string, name?: string): Event => ({
      id,
      previousEventId: id - 1,
      type,
      ...(name ? { stateEnteredEventDetails: { name } } : {}),
    });
    const written = [
      e(1, "ExecutionStarted"),
      e(2, "ParallelStateEntered", "P"),
      e(3, "ParallelStateStarted"),
      e(4, "PassStateEntered", "B"),
      e(5, "PassStateEntered", "A"),
      e(6, "ParallelStateSucceeded"),
      e(7, "ParallelStateExited"),
      e(8, "ExecutionSucceeded"),
    ];
    const normalised = normaliseParallel(written);
    // The branch events masked and sorted, ParallelStateSucceeded dropped by the second
    // splice, and the event after the exit skipped by the loop (left as it was).
    expect(normalised.map((x) => [x.id, x.previousEventId, x.type])).toEqual([
      [1, 0, "ExecutionStarted"],
      [2, 1, "ParallelStateEntered"],
      [3, 2, "ParallelStateStarted"],
      [[0], 0, "PassStateEntered"],
      [[0], 0, "PassStateEntered"],
      [7, 6, "ParallelStateExited"],
      [8, 7, "ExecutionSucceeded"],
    ]);
    // Masked events compare as a set.
    const recorded = [...normalised];
    [recorded[3], recorded[4]] = [recorded[4]!, recorded[3]!];
    expect(compareHistory(recorded, written)).toBe(undefined);
    // Without masked events in the recording, nothing is rewritten.
    expect(compareHistory(written, written)).toBe(undefined);
  });
});
