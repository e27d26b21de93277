import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RECORD_FIELDS } from "../../runtime/commit/execution-cache.js";
import { EXECUTION_FIELDS, storedFields } from "../../runtime/store/fields.js";
import { createMachine, harness, type Harness, REDIS_URL } from "./helpers.js";
import { CommandMonitor } from "./monitor.js";

/**
 * A transition of an execution its worker has not cached (a timer of an execution
 * started long ago, or by another worker) reads the execution's record inside
 * `loadTransition`, with the run: one round trip, not two before the step.
 */
let h: Harness;
let monitor: CommandMonitor;
beforeAll(async () => {
  h = await harness();
  monitor = new CommandMonitor(REDIS_URL, h.prefix);
});
afterAll(async () => {
  monitor.close();
  await h.close();
});

describe("a cold execution's transition", () => {
  it("gets the execution's record with its run, and builds the same context from it", async () => {
    await createMachine(h.runtime, "nap", {
      StartAt: "Nap",
      States: {
        Nap: { Type: "Wait", Seconds: 2, Next: "Say" },
        Say: {
          Type: "Pass",
          Parameters: {
            "name.$": "$$.Execution.Name",
            "id.$": "$$.Execution.Id",
            "start.$": "$$.Execution.StartTime",
            "input.$": "$$.Execution.Input",
            "machine.$": "$$.StateMachine.Name",
          },
          End: true,
        },
      },
    });
    // The worker that starts it caches it; the one that fires its timer never saw it.
    const first = await h.startWorker();
    const { executionId } = await h.runtime.startExecution("nap", {
      name: "cold-1",
      input: { a: [1, 2] },
    });
    const waiting = async () =>
      (await h.runtime.getHistory(executionId)).items.some((e) => e.type === "WaitStateEntered");
    for (let i = 0; !(await waiting()); i++) {
      if (i > 200) throw new Error("the Wait was not entered");
      await new Promise((r) => setTimeout(r, 10));
    }
    await first.close();
    h.workers.splice(h.workers.indexOf(first), 1);

    const { result, commands, direct } = await monitor.commandsOf(async () => {
      await h.startWorker();
      return h.runtime.waitForExecution(executionId, 20_000);
    });
    expect(result.status).toBe("SUCCEEDED");
    const described = await h.runtime.describeExecution(executionId);
    expect(result.output).toEqual({
      name: "cold-1",
      id: executionId,
      start: described.startedAt,
      input: { a: [1, 2] },
      machine: "nap",
    });
    // The record's fields were read inside a script (the load, with the history
    // head: nothing else asks for them all), and by no command of their own.
    const recordReads = (list: string[][]) =>
      list.filter(
        (c) =>
          c[0]?.toLowerCase() === "hmget" &&
          c.slice(2).join(" ").endsWith(storedFields(EXECUTION_FIELDS, RECORD_FIELDS).join(" ")),
      );
    expect(recordReads(commands).length).toBeGreaterThanOrEqual(1);
    expect(recordReads(direct)).toEqual([]);
  }, 30_000);
});
