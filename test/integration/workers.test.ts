import { afterEach, describe, expect, it } from "vitest";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import {
  createMachine,
  exited,
  fullHistory,
  harness,
  historyProblems,
  spawnWorker,
  type Harness,
} from "./helpers.js";

// The same executions run by one, two and three worker processes must end the
// same way: same status and output, same history events (ids may interleave
// differently between Map iterations, so events are compared as a multiset).
const definition = {
  StartAt: "Split",
  States: {
    Split: {
      Type: "Parallel",
      Branches: [
        {
          StartAt: "Fan",
          States: {
            Fan: {
              Type: "Map",
              ItemsPath: "$.items",
              MaxConcurrency: 5,
              ItemProcessor: {
                StartAt: "D",
                States: {
                  D: { Type: "Task", Resource: "function:double", Next: "Check" },
                  Check: {
                    Type: "Choice",
                    Choices: [{ Variable: "$.n", NumericGreaterThan: 1000, Next: "Big" }],
                    Default: "Small",
                  },
                  Big: { Type: "Pass", Result: "big", End: true },
                  Small: { Type: "Pass", Result: "small", End: true },
                },
              },
              End: true,
            },
          },
        },
        { StartAt: "Nap", States: { Nap: { Type: "Wait", Seconds: 1, End: true } } },
      ],
      Next: "Done",
    },
    Done: { Type: "Pass", End: true },
  },
};

interface Result {
  status: string;
  output: Json | undefined;
  events: string[];
}

function shape(events: HistoryEvent[]): string[] {
  return events
    .map(({ id: _i, previousEventId: _p, timestamp: _t, ...rest }) => JSON.stringify(rest))
    .sort();
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
});

async function runWith(workers: number): Promise<Result[]> {
  h = await harness();
  await createMachine(h.runtime, "many", definition);
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const items = Array.from({ length: 12 }, (_, j) => ({ n: i * 60 + j }));
    ids.push(
      (await h.runtime.startExecution("many", { input: { items }, name: `m${i}` })).executionId,
    );
  }
  const procs = Array.from({ length: workers }, () =>
    spawnWorker(h!.prefix, { STEPWISE_CONCURRENCY: "8" }),
  );
  try {
    const results: Result[] = [];
    for (const id of ids) {
      const record = await h.runtime.waitForExecution(id, 20_000);
      const history = await fullHistory(h.runtime, id);
      expect(historyProblems(history)).toEqual([]);
      results.push({ status: record.status, output: record.output, events: shape(history) });
    }
    return results;
  } finally {
    for (const p of procs) p.kill("SIGTERM");
    await Promise.all(procs.map(exited));
    await h.close();
    h = undefined;
  }
}

describe("several worker processes over the same executions", () => {
  it("two and three processes give the same results as one", async () => {
    const one = await runWith(1);
    expect(one.every((r) => r.status === "SUCCEEDED")).toBe(true);
    const [two, three] = [await runWith(2), await runWith(3)];
    expect(two).toEqual(one);
    expect(three).toEqual(one);
  }, 60_000);
});
