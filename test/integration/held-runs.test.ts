import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import type { RunState } from "../../engine/core/run.js";
import { HeldRuns } from "../../runtime/commit/held-runs.js";
import { commitTransition } from "../../runtime/store/scripts/commit-transition.js";
import { loadTransition } from "../../runtime/store/scripts/load-transition.js";
import { taskCallClaim } from "../../runtime/store/scripts/task-call-claim.js";
import { functionRunner } from "../../task-runners/function.js";
import { createMachine, harness, type Harness, REDIS_URL } from "./helpers.js";
import { CommandMonitor } from "./monitor.js";

/**
 * A run that waits on a task its worker calls is stepped, once the result is
 * delivered, from the state the worker committed (runtime/commit/held-runs.ts), not
 * loaded again: an agent loop's turn is one round trip shorter.
 */
const sha = (lua: string) => createHash("sha1").update(lua).digest("hex");

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

describe("held runs", () => {
  it("step a task loop's turns without loading the run, and end with the same result", async () => {
    const calls: number[] = [];
    await h.startWorker({
      taskRunners: [
        functionRunner({
          next: async (input) => {
            const n = (input as { n: number }).n;
            calls.push(n);
            return { n: n + 1 } as Json;
          },
        }),
      ],
    });
    await createMachine(h.runtime, "loop", {
      StartAt: "Call",
      States: {
        Call: { Type: "Task", Resource: "function:next", Next: "More" },
        More: {
          Type: "Choice",
          Choices: [{ Variable: "$.n", NumericLessThan: 12, Next: "Call" }],
          Default: "Done",
        },
        Done: { Type: "Succeed" },
      },
    });
    const { result, commands } = await monitor.commandsOf(async () => {
      const { executionId } = await h.runtime.startExecution("loop", { input: { n: 0 } });
      return h.runtime.waitForExecution(executionId, 20_000);
    });
    expect(result.status).toBe("SUCCEEDED");
    expect(result.output).toEqual({ n: 12 });
    expect(calls).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const scripts = (script: { lua: string }) =>
      commands.filter((c) => c[0]?.toLowerCase() === "evalsha" && c[1] === sha(script.lua)).length;
    // One commit per turn (the result, the Choice and the next call batched), and
    // one load: the first step's. Without held runs every turn loads (13 here).
    expect(scripts(commitTransition)).toBeGreaterThanOrEqual(12);
    expect(scripts(loadTransition)).toBeLessThanOrEqual(2);
    // Each call claimed once, by the claim sent behind its commit (transition.ts
    // `claimBehind`): the claim runs right after that commit, never before it. (A
    // connection's first use of a script is an EVAL of its text: the first turn.)
    const order = commands
      .filter((c) => c[0]?.toLowerCase() === "evalsha")
      .map((c) => c[1])
      .filter((s) => s === sha(commitTransition.lua) || s === sha(taskCallClaim.lua));
    expect(order.filter((s) => s === sha(taskCallClaim.lua)).length).toBeGreaterThanOrEqual(11);
    order.forEach((s, i) => {
      if (s === sha(taskCallClaim.lua)) expect(order[i - 1]).toBe(sha(commitTransition.lua));
    });
  });
});

describe("HeldRuns", () => {
  const held = (seq: number) => ({
    state: { runId: "r" } as unknown as RunState,
    seq,
    history: { count: seq, hash: "" },
    apart: undefined,
  });

  it("gives a run back once, and only at the seq it was held at", () => {
    const runs = new HeldRuns();
    runs.hold("a", held(3));
    expect(runs.take("a", 3)?.seq).toBe(3);
    expect(runs.take("a", 3)).toBeUndefined();
    runs.hold("b", held(3));
    // Another seq: someone else advanced the run; the held state is dropped.
    expect(runs.take("b", 4)).toBeUndefined();
    expect(runs.take("b", 3)).toBeUndefined();
  });

  it("keeps the newest runs within its bound", () => {
    const runs = new HeldRuns(2);
    runs.hold("a", held(1));
    runs.hold("b", held(1));
    runs.hold("c", held(1));
    expect(runs.size).toBe(2);
    expect(runs.take("a", 1)).toBeUndefined();
    expect(runs.take("c", 1)?.seq).toBe(1);
  });
});
