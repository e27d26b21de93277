import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Join, RunState } from "../../engine/core/run.js";
import { liveCounts, writeMapRuns } from "../../runtime/map-runs/map-run-record.js";
import type { RedisClient } from "../../runtime/store/redis.js";

/**
 * What a commit writes ahead of itself to a Map Run's record (map-run-record.ts): the
 * counters at its milestones (opened, reconfigured, children done), nothing at a
 * child's end, whose counters readers take from the run (`liveCounts`).
 */
const ARN = "arn:aws:states:us-east-1:123456789012:mapRun:m/Items:0000";
const RUN = "m:e1";

function join(counts: Partial<Join>): Join {
  return {
    prefix: `arn:aws:states:us-east-1:123456789012:execution:${RUN}/1`,
    total: 4,
    started: 1,
    succeeded: 0,
    failed: 0,
    maxConcurrency: 1,
    outer: {},
    ...counts,
  };
}

function state(phase: NonNullable<RunState["current"]>["phase"]): RunState {
  return {
    runId: `arn:aws:states:us-east-1:123456789012:execution:${RUN}`,
    status: "RUNNING",
    current: { name: "Process", mapRunArn: ARN, phase },
  } as unknown as RunState;
}

const children = (counts: Partial<Join>) => state({ kind: "children", join: join(counts) });

/** The HSETs one step sends (a fake client records the pipeline's commands). */
function writes(
  before: RunState,
  after: RunState,
  event: Partial<RunEvent>,
  history: HistoryEvent[] = [],
): string[][] {
  const sent: string[][] = [];
  const pipeline = {
    hset: (...args: string[]) => sent.push(["hset", ...args]),
    zadd: (...args: string[]) => sent.push(["zadd", ...args.map(String)]),
    exec: async () => [],
  };
  const client = { redis: { pipeline: () => pipeline } } as unknown as RedisClient;
  writeMapRuns(client, { base: "t:" }, RUN, [
    { before, event: event as RunEvent, result: { run: after, history } },
  ]);
  return sent;
}

describe("the Map Run record", () => {
  it("gets the counters when the join opens and when its configuration changes", () => {
    const reading = state({ kind: "task", taskId: "t#1", timerIds: [], purpose: "itemReader" });
    const opened = writes(reading, children({}), { type: "TaskSucceeded" });
    expect(opened).toHaveLength(1);
    expect(opened[0]).toEqual(expect.arrayContaining(["total", "4", "started", "1"]));
    const widened = writes(children({}), children({ maxConcurrency: 2, started: 2 }), {
      type: "MapRunUpdated",
    });
    expect(widened[0]).toEqual(expect.arrayContaining(["maxConcurrency", "2", "started", "2"]));
  });

  it("gets nothing at a child's end that leaves the join open: readers count from the run", () => {
    const before = children({ started: 1 });
    const after = children({ started: 2, succeeded: 1 });
    expect(writes(before, after, { type: "ChildEnded" })).toEqual([]);
    expect(liveCounts(after, ARN)).toEqual({
      total: 4,
      started: 2,
      succeeded: 1,
      failed: 0,
      aborted: 0,
    });
    // A child stopped by its own StopExecution failed the join; AWS counts it aborted.
    expect(liveCounts(children({ started: 3, failed: 2, aborted: 1 }), ARN)).toMatchObject({
      failed: 1,
      aborted: 1,
    });
    expect(liveCounts(after, `${ARN}1`)).toBeUndefined();
  });

  it("gets the final counters when the children are done", () => {
    const done = state({ kind: "collecting", prefix: "p", total: 4, failed: 1 });
    const sent = writes(children({ started: 4, succeeded: 2, failed: 1 }), done, {
      type: "ChildEnded",
    });
    expect(sent[0]).toEqual(
      expect.arrayContaining(["started", "4", "succeeded", "3", "failed", "1"]),
    );
  });

  it("runs again when its parent's redrive redrives it (MapRunRedriven)", () => {
    // The parent had failed: its run holds no state; the redrive opens the new join.
    const failed = { ...state({ kind: "entering" }), status: "FAILED" } as RunState;
    delete (failed as { current?: unknown }).current;
    const at = "2024-01-02T00:00:00.000Z";
    const redriven = {
      id: 9,
      previousEventId: 8,
      type: "MapRunRedriven",
      timestamp: at,
      mapRunRedrivenEventDetails: { mapRunArn: ARN, redriveCount: 2 },
    } as unknown as HistoryEvent;
    const sent = writes(failed, children({ started: 4, succeeded: 3 }), { type: "Redriven" }, [
      redriven,
    ]);
    const fields = sent.flat();
    expect(sent[0]).toEqual(["hset", "t:mr:0000", ...sent[0]!.slice(2)]);
    expect(sent[0]).toEqual(
      expect.arrayContaining([
        "status",
        "RUNNING",
        "stopDate",
        "",
        "redriveCount",
        "2",
        "redriveDate",
        at,
        "run",
        RUN,
      ]),
    );
    // And the redriven join's counters: the items kept count as succeeded.
    expect(fields).toEqual(expect.arrayContaining(["succeeded", "3", "started", "4"]));
  });
});
