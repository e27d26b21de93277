import { describe, expect, it } from "vitest";
import {
  bulkActions,
  bulkFilter,
  countText,
  describeFilter,
  listQuery,
  progressOf,
  type ListFilters,
} from "../../console/src/bulk/filters.js";
import {
  endedBefore,
  listOptionsOf,
  withDefaultStatus,
} from "../../runtime/executions/operations/bulk.js";

/**
 * What the executions list asks for and what a bulk action over it sends (the
 * console's bulk/filters.ts), and how the operation reads that filter back
 * (runtime/executions/operations/bulk.ts): the same executions, end to end.
 */

const NONE: ListFilters = {
  q: "",
  stateMachine: "",
  status: "",
  error: "",
  since: "",
  from: "",
  to: "",
};
const NOW = Date.parse("2026-03-01T12:00:00.000Z");

describe("the list's query", () => {
  it("sends only the filters that are set", () => {
    expect(listQuery(NONE, NOW)).toEqual({});
    expect(
      listQuery(
        { ...NONE, q: "order-", stateMachine: "orders", status: "FAILED", error: "E" },
        NOW,
      ),
    ).toEqual({ namePrefix: "order-", stateMachine: "orders", status: "FAILED", error: "E" });
  });

  it("turns a relative window into an instant before now, and a custom one into instants", () => {
    expect(listQuery({ ...NONE, since: "1h" }, NOW)).toEqual({
      startedAfter: "2026-03-01T11:00:00.000Z",
    });
    const custom = listQuery({ ...NONE, since: "custom", from: "2026-02-01T10:00", to: "" }, NOW);
    expect(custom.startedAfter).toBe(new Date("2026-02-01T10:00").toISOString());
    expect(custom.startedBefore).toBeUndefined();
  });
});

describe("bulk actions over the list", () => {
  it("offers what can change something the list shows", () => {
    expect(bulkActions(NONE)).toEqual(["stop", "pause", "resume"]);
    expect(bulkActions({ ...NONE, status: "RUNNING" })).toEqual(["stop", "pause"]);
    expect(bulkActions({ ...NONE, status: "PAUSED" })).toEqual(["stop", "resume"]);
    expect(bulkActions({ ...NONE, status: "SUCCEEDED" })).toEqual([]);
    // An execution that runs has no error: a list narrowed to one has nothing to stop.
    expect(bulkActions({ ...NONE, error: "States.Timeout" })).toEqual([]);
  });

  it("sends the list's query, the status acted on and a start bound at the confirmation", () => {
    const f = { ...NONE, q: "inc-", stateMachine: "hold" };
    expect(bulkFilter("stop", f, NOW)).toEqual({
      namePrefix: "inc-",
      stateMachine: "hold",
      status: "RUNNING",
      startedBefore: "2026-03-01T12:00:00.001Z",
    });
    expect(bulkFilter("resume", f, NOW).status).toBe("PAUSED");
    expect(bulkFilter("stop", { ...f, status: "PAUSED" }, NOW).status).toBe("PAUSED");
    // An earlier bound of the list's own stays.
    const until = { ...f, since: "custom", to: "2026-02-01T10:00" };
    expect(bulkFilter("pause", until, NOW).startedBefore).toBe(
      new Date("2026-02-01T10:00").toISOString(),
    );
  });

  it("which the operation lists with the same filters, instants as milliseconds", () => {
    const sent = bulkFilter("stop", { ...NONE, q: "inc-", since: "15m" }, NOW);
    const stored = withDefaultStatus("stop", sent);
    expect(listOptionsOf(stored)).toEqual({
      namePrefix: "inc-",
      status: "RUNNING",
      startedAfter: NOW - 15 * 60_000,
      startedBefore: NOW + 1,
    });
    expect(withDefaultStatus("resume", {}).status).toBe("PAUSED");
    expect(withDefaultStatus("purge", {})).toEqual({});
  });

  it("checks endedBefore on the rows, as the listing cannot", () => {
    const row = { stoppedAt: "2026-03-01T11:00:00.000Z" } as never;
    expect(endedBefore({ endedBefore: "2026-03-01T12:00:00.000Z" }, row)).toBe(true);
    expect(endedBefore({ endedBefore: "2026-03-01T10:00:00.000Z" }, row)).toBe(false);
    expect(endedBefore({ endedBefore: "2026-03-01T12:00:00.000Z" }, {} as never)).toBe(false);
    expect(endedBefore({}, {} as never)).toBe(true);
  });

  it("states the filter in words, the count and the progress", () => {
    const words = describeFilter(
      { status: "RUNNING", namePrefix: "inc-", startedBefore: "2026-03-01T12:00:00.001Z" },
      () => "12:00",
    );
    expect(words).toBe(
      "status RUNNING, name starts with “inc-”, any state machine, started before 12:00",
    );
    expect(countText(1000, true)).toBe("1,000+");
    expect(countText(37, false)).toBe("37");
    const running = { status: "RUNNING", matched: 10, done: 4, skipped: 1, failed: 0 };
    expect(progressOf(running, 20)).toEqual({ settled: 5, fraction: 0.25, finished: false });
    expect(progressOf({ ...running, status: "SUCCEEDED" }, 20).fraction).toBe(1);
  });
});
