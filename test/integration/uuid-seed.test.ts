import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { seededRandom } from "../../engine/core/random.js";
import { runExecution } from "../../engine/drivers/memory.js";
import { compileProgram } from "../../engine/program.js";
import { replay } from "../../engine/replay.js";
import { createMachine, fullHistory, harness, type Harness } from "./helpers.js";

/**
 * States.UUID and $uuid draw from 128 random bits the driver takes at the start and
 * the run keeps (issue 13: they were seeded from the execution's name, so anyone who
 * knew a name knew its UUIDs). Replay still reproduces them: the seed is in the
 * journal's Started event. Map iterations draw from the same execution seed.
 */
const definition = {
  StartAt: "Ids",
  States: {
    Ids: {
      Type: "Pass",
      Parameters: { "jsonpath.$": "States.UUID()" },
      Next: "Jsonata",
    },
    Jsonata: {
      Type: "Pass",
      QueryLanguage: "JSONata",
      Output: { jsonpath: "{% $states.input.jsonpath %}", jsonata: "{% $uuid() %}" },
      Next: "Each",
    },
    Each: {
      Type: "Map",
      ItemsPath: "$.items",
      ItemProcessor: {
        StartAt: "Inner",
        States: { Inner: { Type: "Pass", Parameters: { "id.$": "States.UUID()" }, End: true } },
      },
      ResultPath: "$.inner",
      End: true,
    },
  },
};

let h: Harness;
beforeEach(async () => {
  h = await harness();
  await h.startWorker();
});
afterEach(async () => {
  await h.close();
});

describe("random seeds", () => {
  it("the same execution name on two machines gives different UUIDs, and replay reproduces them", async () => {
    const outputs: Record<string, any> = {};
    for (const machine of ["one", "two"]) {
      await createMachine(h.runtime, machine, {
        ...definition,
        States: {
          ...definition.States,
          Jsonata: {
            ...definition.States.Jsonata,
            Output: { ...definition.States.Jsonata.Output, items: [1, 2] },
          },
        },
      });
      const { executionId } = await h.runtime.startExecution(machine, { name: "same-name" });
      const record = await h.runtime.waitForExecution(executionId, 10_000);
      expect(record.status).toBe("SUCCEEDED");
      outputs[machine] = record.output;
      // What the name alone used to give (the run's stream: seed/runId, first draw).
      const fromName = seededRandom(`same-name/${executionId}`, 0).uuid();
      expect((record.output as { jsonpath: string }).jsonpath).not.toBe(fromName);
      const { history: replayed } = replay(
        compileProgram((await h.runtime.getStateMachine(machine)).definition),
        {
          executionId,
          name: record.name,
          startTime: record.startedAt,
          input: record.input,
          stateMachineId: `arn:aws:states:local:000000000000:stateMachine:${machine}`,
          stateMachineName: machine,
          seed: "not-the-seed",
        },
        await h.runtime.journal(executionId),
      );
      expect(replayed).toEqual(await fullHistory(h.runtime, executionId));
    }
    const all = ["one", "two"].flatMap((m) => [
      outputs[m].jsonpath,
      outputs[m].jsonata,
      ...outputs[m].inner.map((i: { id: string }) => i.id),
    ]);
    for (const id of all) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab]/);
    expect(new Set(all).size).toBe(all.length);
  });

  it("in memory: random by default, fixed by a given seed, replayed from the journal", async () => {
    const program = compileProgram({
      StartAt: "Ids",
      States: { Ids: { Type: "Pass", Parameters: { "id.$": "States.UUID()" }, End: true } },
    } as never);
    const run = (seed?: string) =>
      runExecution(program, { executionName: "n", ...(seed ? { seed } : {}) });
    const [a, b, c, d] = await Promise.all([run(), run(), run("fixed"), run("fixed")]);
    expect((a.output as { id: string }).id).not.toBe((b.output as { id: string }).id);
    expect(c.output).toEqual(d.output);
    expect(replay(program, { ...a.execution, seed: "n" }, a.journal).history).toEqual(a.history);
  });
});
