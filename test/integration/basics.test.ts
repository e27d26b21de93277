import { STATE_MACHINE_ARN_PREFIX } from "../../runtime/store/ids.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replay } from "../../engine/replay.js";
import { compileProgram } from "../../engine/program.js";
import { functionRunner } from "../../task-runners/function.js";
import { RuntimeError } from "../../runtime/contract/index.js";
import { handlers } from "./fixtures/handlers.js";
import {
  createMachine,
  fullHistory,
  harness,
  historyProblems,
  passChain,
  type Harness,
} from "./helpers.js";

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h.close();
});

describe("Redis runtime basics", () => {
  it("runs a chain of Pass states to its output, with AWS-shaped history ids 1..N", async () => {
    await h.startWorker();
    await createMachine(h.runtime, "chain", passChain(5));
    const { executionId, created } = await h.runtime.startExecution("chain", {
      input: { a: 1 },
      name: "one",
    });
    expect(created).toBe(true);
    const record = await h.runtime.waitForExecution(executionId, 5_000);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output).toEqual({ a: 1 });
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history[0]!.type).toBe("ExecutionStarted");
    expect(history.at(-1)!.type).toBe("ExecutionSucceeded");
    const journal = await h.runtime.journal(executionId);
    expect(journal.map((j) => j.event.type)).toEqual(["Started", ...Array(5).fill("Continue")]);
  });

  it("starts idempotently by name and refuses another input", async () => {
    await createMachine(h.runtime, "m", passChain(1));
    const a = await h.runtime.startExecution("m", { input: { x: 1, y: 2 }, name: "same" });
    const b = await h.runtime.startExecution("m", { input: { y: 2, x: 1 }, name: "same" });
    expect(b.executionId).toBe(a.executionId);
    expect(b.created).toBe(false);
    await expect(
      h.runtime.startExecution("m", { input: { x: 2 }, name: "same" }),
    ).rejects.toMatchObject({
      code: "ExecutionAlreadyExists",
    });
  });

  it("versions state machines and pins executions", async () => {
    const v1 = await h.runtime.createStateMachine("v", passChain(1) as never);
    const v2 = await h.runtime.updateStateMachine("v", {
      StartAt: "A",
      States: { A: { Type: "Pass", Result: 2, End: true } },
    });
    expect([v1.version, v2.version]).toEqual([1, 2]);
    expect(v1.definitionHash).not.toBe(v2.definitionHash);
    const detail = await h.runtime.getStateMachine("v");
    expect(detail.latestVersion).toBe(2);
    expect(detail.versions.map((v) => v.version)).toEqual([1, 2]);
    await expect(h.runtime.createStateMachine("v", passChain(1) as never)).rejects.toBeInstanceOf(
      RuntimeError,
    );
    await expect(
      h.runtime.createStateMachine("bad", { StartAt: "X", States: {} } as never),
    ).rejects.toMatchObject({
      code: "InvalidDefinition",
    });
  });

  it("calls function tasks, retries them, and runs Map iterations concurrently", async () => {
    await h.startWorker({ taskRunners: [functionRunner(handlers)] });
    await createMachine(h.runtime, "fan", {
      StartAt: "M",
      States: {
        M: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemProcessor: {
            StartAt: "T",
            States: {
              T: { Type: "Task", Resource: "function:double", End: true },
            },
          },
          Next: "F",
        },
        F: {
          Type: "Task",
          Resource: "function:flaky",
          Retry: [{ ErrorEquals: ["Flaky"], IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 1 }],
          ResultPath: null,
          End: true,
        },
      },
    });
    const items = Array.from({ length: 30 }, (_, i) => ({ n: i }));
    const { executionId } = await h.runtime.startExecution("fan", { input: { items } });
    const record = await h.runtime.waitForExecution(executionId, 10_000);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output).toEqual(items.map((item) => ({ n: item.n * 2 })));
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    const { history: replayed } = replay(
      compileProgram((await h.runtime.getStateMachine("fan")).definition),
      {
        executionId,
        name: record.name,
        startTime: record.startedAt,
        input: record.input,
        stateMachineId: `${STATE_MACHINE_ARN_PREFIX}fan`,
        stateMachineName: "fan",
        seed: record.name,
      },
      await h.runtime.journal(executionId),
    );
    expect(replayed).toEqual(history);
  });
});
