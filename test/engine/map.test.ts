import { describe, expect, it } from "vitest";
import type { MapState, StateScope } from "../../engine/core/definition.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import { at, details, execute, ofType, only, single, types } from "./helpers.js";

const identity: StateScope = { StartAt: "I", States: { I: { Type: "Pass", End: true } } };

/** Each item waits `item.s` seconds, then outputs `item.v` (or fails when `item.fail`). */
const timed: StateScope = {
  StartAt: "Check",
  States: {
    Check: {
      Type: "Choice",
      Choices: [{ Variable: "$.fail", IsPresent: true, Next: "Boom" }],
      Default: "W",
    },
    Boom: { Type: "Fail", Error: "Item.Failed", Cause: "bad item" },
    W: { Type: "Wait", SecondsPath: "$.s", Next: "Out" },
    Out: { Type: "Pass", InputPath: "$.v", End: true },
  },
};

function map(extra: Partial<MapState> = {}): MapState {
  return { Type: "Map", ItemProcessor: identity, End: true, ...extra } as MapState;
}

/** The largest number of iterations running at once, replaying the Map* events in order. */
function maxActive(history: HistoryEvent[]): number {
  let active = 0;
  let max = 0;
  for (const e of history) {
    if (e.type === "MapIterationStarted") max = Math.max(max, ++active);
    if (/^MapIteration(Succeeded|Failed|Aborted)$/.test(e.type)) active -= 1;
  }
  return max;
}

describe("Map state: items and item input", () => {
  it("gives each iteration's ItemSelector $$.Map.Item.Source = STATE_DATA, in JSONPath and JSONata", async () => {
    // AWS developer guide, "Context object data for Map states": for items of the state
    // input, Source is STATE_DATA.
    const input = [{ who: "bob" }, { who: "meg" }];
    const expected = [
      { i: 0, v: { who: "bob" }, s: "STATE_DATA" },
      { i: 1, v: { who: "meg" }, s: "STATE_DATA" },
    ];
    const jsonPath = await execute(
      single(
        map({
          ItemSelector: {
            "i.$": "$$.Map.Item.Index",
            "v.$": "$$.Map.Item.Value",
            "s.$": "$$.Map.Item.Source",
          },
        }),
      ),
      { input },
    );
    expect(jsonPath.output).toEqual(expected);
    const jsonata = await execute(
      {
        QueryLanguage: "JSONata",
        ...single(
          map({
            ItemSelector: {
              i: "{% $states.context.Map.Item.Index %}",
              v: "{% $states.context.Map.Item.Value %}",
              s: "{% $states.context.Map.Item.Source %}",
            },
          }),
        ),
      },
      { input },
    );
    expect(jsonata.output).toEqual(expected);
  });

  it("iterates the input array and outputs the results in item order", async () => {
    const items = [
      { s: 5, v: "a" },
      { s: 1, v: "b" },
      { s: 3, v: "c" },
    ];
    const r = await execute(single(map({ ItemProcessor: timed })), { input: items });
    expect(r.output).toEqual(["a", "b", "c"]);
  });

  it("ItemsPath selects the array", async () => {
    const r = await execute(single(map({ ItemsPath: "$.list" })), {
      input: { list: [1, 2], x: 0 },
    });
    expect(r.output).toEqual([1, 2]);
  });

  it("an empty array gives [] without starting any iteration", async () => {
    const r = await execute(single(map()), { input: [] });
    expect(r).toMatchObject({ status: "SUCCEEDED", output: [] });
    expect(ofType(r.history, "MapIterationStarted")).toEqual([]);
    expect(types(r.history)).toEqual([
      "ExecutionStarted",
      "MapStateEntered",
      "MapStateStarted",
      "MapStateSucceeded",
      "MapStateExited",
      "ExecutionSucceeded",
    ]);
  });

  it("ItemSelector sees $$.Map.Item.Index and $$.Map.Item.Value and the state input", async () => {
    const r = await execute(
      single(
        map({
          ItemsPath: "$.items",
          ItemSelector: {
            "index.$": "$$.Map.Item.Index",
            "value.$": "$$.Map.Item.Value",
            "shared.$": "$.shared",
          },
        }),
      ),
      { input: { items: ["x", "y"], shared: 9 } },
    );
    expect(r.output).toEqual([
      { index: 0, value: "x", shared: 9 },
      { index: 1, value: "y", shared: 9 },
    ]);
  });

  it("ItemSelector sees variables; iteration events name a Map whose name a pointer escapes", async () => {
    const name = "fan/out~1";
    const r = await execute(
      {
        StartAt: "Set",
        States: {
          Set: { Type: "Pass", Assign: { greet: "hi" }, Next: name },
          [name]: map({
            ItemSelector: { "g.$": "$greet", "i.$": "$$.Map.Item.Index", "n.$": "$$.State.Name" },
          }),
        },
      },
      { input: ["a", "b"] },
    );
    expect(r.output).toEqual([
      { g: "hi", i: 0, n: name },
      { g: "hi", i: 1, n: name },
    ]);
    for (const type of ["MapIterationStarted", "MapIterationSucceeded"] as const) {
      expect(ofType(r.history, type).map(details)).toEqual([
        { name, index: 0 },
        { name, index: 1 },
      ]);
    }
  });

  it("each iteration's first event follows its MapIterationStarted, in a window too", async () => {
    const r = await execute(single(map({ MaxConcurrency: 2 }), "M"), { input: [1, 2, 3, 4, 5] });
    const started = ofType(r.history, "MapIterationStarted");
    expect(started.map((e) => details(e).index)).toEqual([0, 1, 2, 3, 4]);
    for (const e of started) {
      // The parent's own chain may follow it too; the iteration's chain starts there.
      const followers = r.history.filter((h) => h.previousEventId === e.id);
      expect(followers.map((h) => h.type)).toContain("PassStateEntered");
    }
    expect(r.output).toEqual([1, 2, 3, 4, 5]);
  });

  it("legacy Iterator with Parameters behaves like ItemProcessor with ItemSelector", async () => {
    const r = await execute(
      single({
        Type: "Map",
        ItemsPath: "$.items",
        Parameters: { "i.$": "$$.Map.Item.Index", "v.$": "$$.Map.Item.Value" },
        Iterator: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
        End: true,
      }),
      { input: { items: [10, 20] } },
    );
    expect(r.output).toEqual([
      { i: 0, v: 10 },
      { i: 1, v: 20 },
    ]);
    expect(ofType(r.history, "MapIterationSucceeded")).toHaveLength(2);
  });

  it("ResultSelector and ResultPath apply to the array of results", async () => {
    const r = await execute(
      single(
        map({
          ItemsPath: "$.items",
          ResultSelector: { "n.$": "States.ArrayLength($)" },
          ResultPath: "$.summary",
        }),
      ),
      { input: { items: [1, 2, 3] } },
    );
    expect(r.output).toEqual({ items: [1, 2, 3], summary: { n: 3 } });
  });

  it("an ItemsPath that is not an array fails with States.Runtime", async () => {
    const r = await execute(single(map({ ItemsPath: "$.x" })), { input: { x: { not: "array" } } });
    expect(r).toMatchObject({ status: "FAILED", error: "States.Runtime" });
  });

  it("records MapStateStarted with the item count and one MapIterationStarted per item", async () => {
    const r = await execute(single(map(), "M"), { input: [1, 2, 3] });
    expect(details(only(ofType(r.history, "MapStateStarted")))).toEqual({ length: 3 });
    expect(ofType(r.history, "MapIterationStarted").map(details)).toEqual([
      { name: "M", index: 0 },
      { name: "M", index: 1 },
      { name: "M", index: 2 },
    ]);
  });
});

describe("Map state: MaxConcurrency", () => {
  const items = [
    { s: 3, v: 0 },
    { s: 1, v: 1 },
    { s: 2, v: 2 },
    { s: 1, v: 3 },
    { s: 1, v: 4 },
  ];

  it("with MaxConcurrency 2 at most two iterations are active at once", async () => {
    const r = await execute(single(map({ ItemProcessor: timed, MaxConcurrency: 2 })), {
      input: items,
    });
    expect(r.output).toEqual([0, 1, 2, 3, 4]);
    expect(maxActive(r.history)).toBe(2);
    // Item 2 starts when item 1 (1 s) ends; item 3 when items 0 and 2 end at 3 s.
    expect(ofType(r.history, "MapIterationStarted").map(at)).toEqual([0, 0, 1000, 3000, 3000]);
    expect(at(only(ofType(r.history, "MapStateExited")))).toBe(4000);
  });

  it("MaxConcurrency 1 runs the items one after the other", async () => {
    const r = await execute(single(map({ ItemProcessor: timed, MaxConcurrency: 1 })), {
      input: items,
    });
    expect(maxActive(r.history)).toBe(1);
    expect(at(only(ofType(r.history, "MapStateExited")))).toBe(8000);
  });

  it("MaxConcurrency 0 (the default) starts every item at once", async () => {
    const r = await execute(single(map({ ItemProcessor: timed, MaxConcurrency: 0 })), {
      input: items,
    });
    expect(maxActive(r.history)).toBe(5);
    expect(at(only(ofType(r.history, "MapStateExited")))).toBe(3000);
  });

  it("MaxConcurrencyPath reads the limit from the input", async () => {
    const r = await execute(
      single(map({ ItemProcessor: timed, ItemsPath: "$.items", MaxConcurrencyPath: "$.max" })),
      { input: { items, max: 2 } },
    );
    expect(maxActive(r.history)).toBe(2);
  });
});

describe("Map state: failures", () => {
  it("one failing iteration fails the Map with its error; running iterations are aborted", async () => {
    const r = await execute(
      {
        StartAt: "M",
        States: {
          M: map({
            ItemProcessor: timed,
            End: undefined,
            Next: "After",
            Catch: [{ ErrorEquals: ["States.ALL"], Next: "After" }],
          }),
          // Keeps the execution running well past the aborted iterations' timers.
          After: { Type: "Wait", Seconds: 100, End: true },
        },
        // Items 0 and 2 would run for 10 s; item 1 fails after 0 s.
      },
      { input: [{ s: 10, v: 0 }, { fail: true }, { s: 10, v: 2 }] },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual({ Error: "Item.Failed", Cause: "bad item" });
    expect(details(only(ofType(r.history, "MapStateFailed")))).toMatchObject({
      error: "Item.Failed",
    });
    expect(ofType(r.history, "MapIterationFailed").map((e) => details(e).index)).toEqual([1]);
    expect(
      ofType(r.history, "MapIterationAborted")
        .map((e) => details(e).index)
        .sort(),
    ).toEqual([0, 2]);
    expect(ofType(r.history, "MapIterationSucceeded")).toEqual([]);
    const outs = ofType(r.history, "PassStateEntered").filter((e) => details(e).name === "Out");
    expect(outs).toEqual([]);
  });

  // AWS "Setting failure thresholds for Distributed Map states": the Map fails with
  // States.ExceedToleratedFailureThreshold when failures exceed either threshold.
  type Row = [
    name: string,
    tolerance: Partial<MapState>,
    failures: number,
    total: number,
    ok: boolean,
  ];
  it.each<Row>([
    ["count 1, 1 failure", { ToleratedFailureCount: 1 }, 1, 4, true],
    ["count 1, 2 failures", { ToleratedFailureCount: 1 }, 2, 4, false],
    ["count 0, 1 failure", { ToleratedFailureCount: 0 }, 1, 4, false],
    ["count 0, no failure", { ToleratedFailureCount: 0 }, 0, 4, true],
    ["50%, 2 of 4 fail", { ToleratedFailurePercentage: 50 }, 2, 4, true],
    ["50%, 3 of 4 fail", { ToleratedFailurePercentage: 50 }, 3, 4, false],
    ["0%, 1 of 4 fail", { ToleratedFailurePercentage: 0 }, 1, 4, false],
    ["100%, 4 of 4 fail", { ToleratedFailurePercentage: 100 }, 4, 4, true],
    [
      "count 3 or 10%, 2 of 4 fail (percentage exceeded)",
      { ToleratedFailureCount: 3, ToleratedFailurePercentage: 10 },
      2,
      4,
      false,
    ],
  ])("tolerated failures: %s", async (_, tolerance, failures, total, ok) => {
    const input = Array.from({ length: total }, (_, i): Json =>
      i < failures ? { fail: true } : { s: 0, v: i },
    );
    const r = await execute(single(map({ ItemProcessor: timed, ...tolerance })), { input });
    if (ok) {
      expect(r.status).toBe("SUCCEEDED");
      expect(Array.isArray(r.output) && r.output.length).toBe(total);
    } else {
      expect(r).toMatchObject({
        status: "FAILED",
        error: "States.ExceedToleratedFailureThreshold",
      });
    }
  });

  it("ToleratedFailureCountPath reads the threshold from the input", async () => {
    const items: Json[] = [{ fail: true }, { fail: true }, { s: 0, v: 1 }];
    const run = (n: number) =>
      execute(
        single(
          map({ ItemProcessor: timed, ItemsPath: "$.items", ToleratedFailureCountPath: "$.n" }),
        ),
        { input: { items, n } },
      );
    expect((await run(2)).status).toBe("SUCCEEDED");
    expect((await run(1)).error).toBe("States.ExceedToleratedFailureThreshold");
  });

  it("Retry on a Map state reruns all items", async () => {
    const r = await execute(
      single(
        map({
          ItemProcessor: {
            StartAt: "T",
            States: { T: { Type: "Task", Resource: "x", End: true } },
          },
          Retry: [{ ErrorEquals: ["Flaky"], IntervalSeconds: 2 }],
        }),
      ),
      {
        input: [1, 2],
        mocks: {
          T: [{ Return: "a" }, { Throw: { Error: "Flaky" } }, { Return: "c" }, { Return: "d" }],
        },
      },
    );
    expect(r.output).toEqual(["c", "d"]);
    expect(ofType(r.history, "MapStateStarted").map(at)).toEqual([0, 2000]);
  });
});

describe("Map state: ItemBatcher", () => {
  it("groups items into batches of MaxItemsPerBatch with the BatchInput", async () => {
    const r = await execute(
      single(
        map({
          ItemsPath: "$.items",
          ItemBatcher: { MaxItemsPerBatch: 2, BatchInput: { "tag.$": "$.tag" } },
          ItemProcessor: {
            ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
            ...identity,
          },
        }),
      ),
      { input: { items: [1, 2, 3, 4, 5], tag: "t" } },
    );
    expect(r.output).toEqual([
      { Items: [1, 2], BatchInput: { tag: "t" } },
      { Items: [3, 4], BatchInput: { tag: "t" } },
      { Items: [5], BatchInput: { tag: "t" } },
    ]);
    // A Distributed Map runs each batch as a child execution of its Map Run, whose
    // history starts with the batch as its input; the parent's records no iteration.
    expect(ofType(r.history, "MapIterationStarted")).toHaveLength(0);
    const children = [...r.childExecutions.values()];
    expect(children).toHaveLength(3);
    expect(
      children.map((c) => JSON.parse(c.history[0]!.executionStartedEventDetails!.input as string)),
    ).toEqual([
      { Items: [1, 2], BatchInput: { tag: "t" } },
      { Items: [3, 4], BatchInput: { tag: "t" } },
      { Items: [5], BatchInput: { tag: "t" } },
    ]);
  });

  it("MaxInputBytesPerBatch keeps every item, in order, in batches under the limit", async () => {
    const items = Array.from({ length: 10 }, (_, i) => "x".repeat(20) + i);
    const r = await execute(single(map({ ItemBatcher: { MaxInputBytesPerBatch: 100 } })), {
      input: items,
    });
    const batches = r.output as { Items: string[] }[];
    expect(batches.length).toBeGreaterThan(1);
    expect(batches.flatMap((b) => b.Items)).toEqual(items);
    for (const b of batches) expect(JSON.stringify(b.Items).length).toBeLessThanOrEqual(100);
  });
});
