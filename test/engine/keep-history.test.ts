import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import { execute } from "./helpers.js";

/**
 * `keepHistory: false` (engine/drivers/memory.ts), as an EXPRESS execution runs
 * (runtime/executions/express.ts): the same run and outcome, with no history or
 * journal kept; the history, when told (`onHistory`), is the one a kept run writes.
 */
const machine: StateMachineDefinition = {
  StartAt: "P",
  States: {
    P: {
      Type: "Parallel",
      Branches: [
        { StartAt: "A", States: { A: { Type: "Pass", Result: 1, End: true } } },
        {
          StartAt: "W",
          States: {
            W: { Type: "Wait", Seconds: 5, Next: "T" },
            T: {
              Type: "Task",
              Resource: "arn:aws:states:::lambda:invoke",
              Retry: [{ ErrorEquals: ["States.ALL"], IntervalSeconds: 1 }],
              End: true,
            },
          },
        },
      ],
      Next: "M",
    },
    M: {
      Type: "Map",
      ItemsPath: "$[1]",
      ItemProcessor: { StartAt: "I", States: { I: { Type: "Pass", End: true } } },
      Next: "D",
    },
    D: {
      Type: "Map",
      ItemsPath: "$",
      Label: "L",
      ItemProcessor: {
        ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
        StartAt: "J",
        States: { J: { Type: "Pass", End: true } },
      },
      End: true,
    },
  },
};

const mocks = {
  T: [{ Throw: { Error: "Boom", Cause: "once" } }, { Return: [7, 8] }],
};

describe("the in-memory driver without history", () => {
  it("runs to the same outcome and keeps no history or journal", async () => {
    const kept = await execute(machine, { input: [[1, 2]], mocks });
    const told: HistoryEvent[] = [];
    const bare = await execute(machine, {
      input: [[1, 2]],
      mocks,
      keepHistory: false,
      onHistory: (events) => told.push(...events),
    });
    expect(kept.status).toBe("SUCCEEDED");
    expect(bare.status).toBe(kept.status);
    expect(bare.output).toEqual(kept.output);
    expect(bare.transitions).toBe(kept.transitions);
    expect(bare.history).toEqual([]);
    expect(bare.journal).toEqual([]);
    expect(kept.journal.length).toBeGreaterThan(0);
    // Event ids are numbered as if kept: the told history is the kept one.
    expect(told).toEqual(kept.history);
    // The Distributed Map's child executions: their statuses, no history.
    expect([...bare.childExecutions.keys()]).toEqual([...kept.childExecutions.keys()]);
    for (const [arn, child] of bare.childExecutions) {
      expect(child.status).toBe(kept.childExecutions.get(arn)!.status);
      expect(child.history).toEqual([]);
    }
  });

  it("fails as a kept run does", async () => {
    const failing: StateMachineDefinition = {
      StartAt: "F",
      States: { F: { Type: "Fail", Error: "E", Cause: "why" } },
    };
    const kept = await execute(failing);
    const bare = await execute(failing, { keepHistory: false });
    expect(bare.status).toBe("FAILED");
    expect({ error: bare.error, cause: bare.cause }).toEqual({
      error: kept.error,
      cause: kept.cause,
    });
    expect(bare.history).toEqual([]);
  });
});
