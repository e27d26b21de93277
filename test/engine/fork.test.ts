import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { runExecution, type TaskHandlers } from "../../engine/drivers/memory.js";
import { forkPlan } from "../../engine/fork.js";
import { compileProgram } from "../../engine/program.js";
import { replay } from "../../engine/replay.js";

/**
 * Forks on the in-memory driver (the reference driver), from EVERY state entered of
 * an execution, top level, Map iterations and Parallel branches alike (issue 15).
 * Forked without a new input, a fork of a deterministic machine (tasks that are
 * functions of their input) must end as its source did: every run is rebuilt as it
 * was and takes up where it was, whether it
 * was about to execute a state, waited on a timer or a task, had not started yet,
 * or had ended without its parent taking its end in. Its journal replays to its
 * history, which begins with ExecutionForked. (Random draws are not the source's:
 * a run's stream is keyed by its id, and the fork's runs have the fork's ids.)
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const uuids = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (_, v: unknown) =>
    typeof v === "string" && UUID.test(v) ? "<uuid>" : v,
  );
const START = "2025-01-01T00:00:00.000Z";
/** A task that answers later (after a few real milliseconds): forks find it in flight. */
const TASKS: TaskHandlers = {
  "arn:aws:lambda:us-east-1:123456789012:function:double": async (input: Json) => {
    const n = Number((input as { n: number }).n);
    await new Promise((r) => setTimeout(r, 5 * (n % 4)));
    return { n: n * 2 };
  },
};
const DOUBLE = "arn:aws:lambda:us-east-1:123456789012:function:double";

const item = {
  StartAt: "Prep",
  States: {
    Prep: {
      Type: "Pass",
      Parameters: { "n.$": "$.n", "s.$": "$.s", "id.$": "States.UUID()" },
      Next: "Nap",
    },
    Nap: { Type: "Wait", SecondsPath: "$.s", Next: "Work" },
    Work: {
      Type: "Task",
      Resource: DOUBLE,
      Parameters: { "n.$": "$.n" },
      ResultPath: "$.r",
      End: true,
    },
  },
};

const cases: { name: string; definition: StateMachineDefinition; input: Json }[] = [
  {
    name: "a Map with a window of 2 (Pass, Wait, Task per item)",
    definition: {
      StartAt: "Each",
      States: {
        Each: {
          Type: "Map",
          ItemsPath: "$.items",
          MaxConcurrency: 2,
          ItemProcessor: item,
          Next: "After",
        },
        After: { Type: "Pass", Parameters: { "all.$": "$", "id.$": "States.UUID()" }, End: true },
      },
    } as never,
    input: { items: [1, 2, 3, 4, 5].map((n) => ({ n, s: n % 3 })) },
  },
  {
    name: "a Parallel with a nested Map in one branch",
    definition: {
      StartAt: "Both",
      States: {
        Both: {
          Type: "Parallel",
          Branches: [
            { StartAt: "Solo", States: { Solo: { ...item.States.Work, Parameters: { n: 21 } } } },
            {
              StartAt: "Inner",
              States: {
                Inner: { Type: "Map", ItemsPath: "$.items", ItemProcessor: item, End: true },
              },
            },
          ],
          End: true,
        },
      },
    } as never,
    input: { items: [0, 1, 2].map((n) => ({ n, s: n })) },
  },
  {
    // A branch ends while the other enters its next state: a fork there finds an
    // ended branch its Parallel has not taken in yet.
    name: "a Parallel whose short branch ends before the other moves on",
    definition: {
      StartAt: "Both",
      States: {
        Both: {
          Type: "Parallel",
          Branches: [
            { StartAt: "One", States: { One: { Type: "Pass", Result: 1, End: true } } },
            {
              StartAt: "A",
              States: {
                A: { Type: "Pass", Result: "a", ResultPath: "$.a", Next: "B" },
                B: { Type: "Pass", Result: "b", ResultPath: "$.b", Next: "C" },
                C: { Type: "Pass", Result: "c", ResultPath: "$.c", End: true },
              },
            },
          ],
          Next: "Done",
        },
        Done: { Type: "Pass", End: true },
      },
    } as never,
    input: { x: 1 },
  },
];

describe("fork from every state entered (in-memory driver)", () => {
  for (const c of cases) {
    it(`${c.name}: every fork ends as its source`, async () => {
      const program = compileProgram(c.definition);
      const common = { input: c.input, startTime: START, tasks: TASKS, seed: "source-seed" };
      const source = await runExecution(program, { ...common, executionName: "source" });
      expect(source.status).toBe("SUCCEEDED");
      const points = source.history.filter((e) => e.type.endsWith("StateEntered"));
      expect(points.length).toBeGreaterThan(4);
      for (const point of points) {
        const forkId = `arn:aws:states:local:000000000000:execution:StateMachine:fork-${point.id}`;
        const plan = forkPlan(
          program,
          source.execution,
          source.journal,
          source.history,
          point.id,
          undefined,
          forkId,
        );
        if (!plan.ok) throw new Error(`event ${point.id}: ${plan.reason}`);
        const fork = await runExecution(program, {
          ...common,
          executionName: `fork-${point.id}`,
          executionArn: forkId,
          fork: plan,
        });
        expect({ at: point.id, output: uuids(fork.output) }).toEqual({
          at: point.id,
          output: uuids(source.output),
        });
        expect(fork.history[0]!.type).toBe("ExecutionForked");
        expect(fork.history.map((e) => e.id)).toEqual(fork.history.map((_, i) => i + 1));
        expect(replay(program, fork.execution, fork.journal).history).toEqual(fork.history);
      }
    });
  }

  it("gives the state of the fork point its new input, and only that state", async () => {
    const c = cases[0]!;
    const program = compileProgram(c.definition);
    const common = { input: c.input, startTime: START, tasks: TASKS, seed: "source-seed" };
    const source = await runExecution(program, { ...common, executionName: "source" });
    // Item 2 entering Work: its task doubles 50 instead of 3.
    const point = source.history.filter(
      (e) =>
        e.type === "TaskStateEntered" &&
        JSON.parse(e.stateEnteredEventDetails!.input as string).n === 3,
    )[0]!;
    const given = { ...JSON.parse(point.stateEnteredEventDetails!.input as string), n: 50 };
    const forkId = "arn:aws:states:local:000000000000:execution:StateMachine:fixed";
    const plan = forkPlan(
      program,
      source.execution,
      source.journal,
      source.history,
      point.id,
      given,
      forkId,
    );
    expect(plan.ok).toBe(true);
    const fork = await runExecution(program, {
      ...common,
      executionName: "fixed",
      executionArn: forkId,
      fork: plan as Extract<typeof plan, { ok: true }>,
    });
    const all = (r: typeof source) => (r.output as { all: { n: number; r: { n: number } }[] }).all;
    expect(all(fork).map((i) => i.r.n)).toEqual([2, 4, 100, 8, 10]);
    expect(all(fork).map((i) => i.n)).toEqual([1, 2, 50, 4, 5]);
  });

  it("refuses an event that is not a state entered", async () => {
    const c = cases[0]!;
    const program = compileProgram(c.definition);
    const source = await runExecution(program, { input: c.input, tasks: TASKS, seed: "s" });
    const exited = source.history.find((e) => e.type === "PassStateExited")!;
    const plan = forkPlan(
      program,
      source.execution,
      source.journal,
      source.history,
      exited.id,
      undefined,
      "x",
    );
    expect(plan).toMatchObject({ ok: false });
  });
});
