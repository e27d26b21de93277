import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { runExecution, type TaskHandlers } from "../../engine/drivers/memory.js";
import { forkPlan } from "../../engine/fork.js";
import { compileProgram } from "../../engine/program.js";
import { redrivePlan } from "../../engine/redrive.js";
import { replay } from "../../engine/replay.js";

/**
 * Redrive on the in-memory driver (the reference driver): AWS's RedriveExecution
 * "reschedules and redrives only the iterations and branches that failed or
 * aborted", and "continues the failed execution from the unsuccessful step". A task
 * that fails its first call for some inputs fails the execution; redriven, it ends
 * as a run without failures would have, calling again only what failed or was
 * aborted before it finished, from the state it was in. The whole journal, first
 * run and redrive, replays to the whole history.
 */
const WORK = "arn:aws:lambda:us-east-1:123456789012:function:work";
const PREP = "arn:aws:lambda:us-east-1:123456789012:function:prep";

/** Handlers that count calls per input and fail the first calls of the named ones (once per mention). */
function service(failing: string[]): { tasks: TaskHandlers; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const left = [...failing];
  const handler = (kind: string) => async (input: Json) => {
    const name = `${kind}:${String((input as { name: string }).name)}`;
    calls.set(name, (calls.get(name) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, 2));
    const at = left.indexOf(name);
    if (at >= 0) {
      left.splice(at, 1);
      throw { error: "Work.Failed", cause: `${name} failed` };
    }
    return { [kind]: name };
  };
  return { tasks: { [WORK]: handler("work"), [PREP]: handler("prep") }, calls };
}

const item = {
  StartAt: "Prep",
  States: {
    Prep: { Type: "Task", Resource: PREP, ResultPath: "$.prep", Next: "Nap" },
    Nap: { Type: "Wait", SecondsPath: "$.s", Next: "Work" },
    Work: { Type: "Task", Resource: WORK, ResultPath: "$.work", End: true },
  },
};

const items = (names: string[]) => names.map((name, i) => ({ name, s: (i * 7) % 3 }));

const cases: {
  name: string;
  definition: object;
  input: Json;
  failing: string[];
}[] = [
  {
    name: "a Map: one item fails at its second task (siblings waiting are aborted)",
    definition: {
      StartAt: "Each",
      States: { Each: { Type: "Map", ItemsPath: "$.items", ItemProcessor: item, End: true } },
    },
    input: { items: items(["a", "b", "c", "d", "e"]) },
    failing: ["work:c"],
  },
  {
    name: "a Map with a window of 2: items never started start",
    definition: {
      StartAt: "Each",
      States: {
        Each: {
          Type: "Map",
          ItemsPath: "$.items",
          MaxConcurrency: 2,
          ItemProcessor: item,
          End: true,
        },
      },
    },
    input: { items: items(["a", "b", "c", "d", "e"]) },
    failing: ["work:b"],
  },
  {
    name: "a Map past its tolerated failures: every failed item runs again",
    definition: {
      StartAt: "Each",
      States: {
        Each: {
          Type: "Map",
          ItemsPath: "$.items",
          ToleratedFailureCount: 1,
          ItemProcessor: item,
          End: true,
        },
      },
    },
    input: { items: items(["a", "b", "c", "d"]) },
    failing: ["prep:a", "work:d"],
  },
  {
    name: "a Parallel with a Map in a branch: down to the failed item",
    definition: {
      StartAt: "Both",
      States: {
        Both: {
          Type: "Parallel",
          Branches: [
            { StartAt: "Solo", States: { Solo: { Type: "Task", Resource: WORK, End: true } } },
            {
              StartAt: "Inner",
              States: {
                Inner: { Type: "Map", ItemsPath: "$.items", ItemProcessor: item, End: true },
              },
            },
          ],
          Next: "After",
        },
        After: { Type: "Pass", End: true },
      },
    },
    input: { name: "solo", items: items(["x", "y", "z"]) },
    failing: ["work:y"],
  },
];

describe("redrive inside Map and Parallel (in-memory driver)", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const program = compileProgram(c.definition as StateMachineDefinition);
      const clean = await runExecution(program, { input: c.input, tasks: service([]).tasks });
      expect(clean.status).toBe("SUCCEEDED");

      const { tasks, calls } = service(c.failing);
      const failed = await runExecution(program, { input: c.input, tasks, seed: "s" });
      expect(failed.status).toBe("FAILED");
      const before = new Map(calls);
      const plan = redrivePlan(program, failed.execution, failed.journal)!;
      const redriven = await runExecution(program, {
        tasks,
        redrive: { from: failed, plan, redriveCount: 1 },
      });
      expect(redriven.status).toBe("SUCCEEDED");
      expect(redriven.output).toEqual(clean.output);
      // A call made again is one that failed, or one whose item was stopped before
      // its task answered; a task that succeeded is never called again.
      for (const [name, n] of calls) {
        const again = n - (before.get(name) ?? 0);
        expect({ name, again: again <= 1 }).toEqual({ name, again: true });
      }
      for (const name of c.failing) expect(calls.get(name)).toBe(2);
      const succeededBefore = failed.history.filter(
        (e) => e.type === "LambdaFunctionSucceeded",
      ).length;
      const succeededAfter = redriven.history.filter(
        (e) => e.type === "LambdaFunctionSucceeded",
      ).length;
      const cleanTasks = clean.history.filter((e) => e.type === "LambdaFunctionSucceeded").length;
      // Every task succeeded exactly once overall.
      expect(succeededAfter).toBe(cleanTasks);
      expect(succeededBefore).toBeLessThan(cleanTasks);
      expect(redriven.history.map((e) => e.id)).toEqual(redriven.history.map((_, i) => i + 1));
      expect(replay(program, redriven.execution, redriven.journal).history).toEqual(
        redriven.history,
      );

      // A fork from any state entered since the redrive (the failing calls are spent
      // now) ends as a run without failures.
      const since = failed.history.length;
      const points = redriven.history.slice(since).filter((e) => e.type.endsWith("StateEntered"));
      for (const point of points) {
        const forkId = `arn:aws:states:local:000000000000:execution:StateMachine:f${point.id}`;
        const fork = forkPlan(
          program,
          redriven.execution,
          redriven.journal,
          redriven.history,
          point.id,
          undefined,
          forkId,
        );
        if (!fork.ok) throw new Error(`event ${point.id}: ${fork.reason}`);
        const forked = await runExecution(program, {
          input: c.input,
          tasks,
          executionArn: forkId,
          fork,
        });
        expect({ at: point.id, output: forked.output }).toEqual({
          at: point.id,
          output: clean.output,
        });
      }
    });
  }

  it("redrives twice: what succeeded in the first redrive is kept by the second", async () => {
    const c = cases[1]!;
    const program = compileProgram(c.definition as StateMachineDefinition);
    const clean = await runExecution(program, { input: c.input, tasks: service([]).tasks });
    const { tasks, calls } = service(["work:b", "work:d", "work:d"]);
    let run = await runExecution(program, { input: c.input, tasks, seed: "s" });
    const statuses: string[] = [run.status];
    for (let n = 1; run.status === "FAILED" && n <= 3; n++) {
      const plan = redrivePlan(program, run.execution, run.journal)!;
      run = await runExecution(program, { tasks, redrive: { from: run, plan, redriveCount: n } });
      statuses.push(run.status);
    }
    expect(statuses).toEqual(["FAILED", "FAILED", "FAILED", "SUCCEEDED"]);
    expect(run.output).toEqual(clean.output);
    expect(calls.get("work:d")).toBe(3);
    expect(calls.get("work:b")).toBe(2);
    for (const name of ["prep:a", "work:a", "prep:b", "prep:d", "work:e"]) {
      expect({ name, calls: calls.get(name) }).toEqual({ name, calls: 1 });
    }
    expect(replay(program, run.execution, run.journal).history).toEqual(run.history);
  });
});
