import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { verifyAudit } from "../../runtime/audit/verify.js";
import { functionRunner } from "../../task-runners/function.js";
import { handlers } from "./fixtures/handlers.js";
import {
  createMachine,
  exited,
  fullHistory,
  harness,
  historyProblems,
  spawnWorker,
  type Harness,
} from "./helpers.js";

// Workers are real processes that SIGKILL themselves at a named point
// (runtime/worker/crash.ts); a second worker must finish every execution correctly. The
// second one runs in this process: it only has to find in Redis what the dead one
// left, and starting a process for it cost more than the rest of a test. Each test
// has its own key prefix and processes, so they run at once: most of a test is
// waiting for the dead worker's job locks to expire.
const ITEMS = 8;
const EXECUTIONS = 6;

const definition = {
  StartAt: "Prepare",
  States: {
    Prepare: { Type: "Pass", Next: "Fan" },
    Fan: {
      Type: "Map",
      ItemsPath: "$.items",
      MaxConcurrency: 4,
      ItemProcessor: {
        StartAt: "Double",
        States: {
          Double: { Type: "Task", Resource: "function:double", Next: "Keep" },
          Keep: { Type: "Pass", End: true },
        },
      },
      ResultPath: "$.doubled",
      Next: "Done",
    },
    Done: { Type: "Pass", End: true },
  },
};

/** A fresh prefix for one test, its keys deleted and its in-process workers stopped after it. */
async function withHarness<T>(use: (h: Harness) => Promise<T>): Promise<T> {
  const h = await harness();
  try {
    return await use(h);
  } finally {
    await h.close();
  }
}

/** Lets a worker process run `prefix`'s executions until it kills itself at `point`. */
async function crashAt(
  prefix: string,
  point: string,
  after: number,
  env: Record<string, string> = {},
): Promise<void> {
  const doomed = spawnWorker(prefix, {
    STEPWISE_CRASH_AT: point,
    STEPWISE_CRASH_AFTER: String(after),
    ...env,
  });
  await exited(doomed);
  expect(doomed.signalCode).toBe("SIGKILL");
}

async function crashThenRecover(point: string, after: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "stepwise-crash-"));
  const calls = join(dir, "calls.txt");
  try {
    await withHarness(async (h) => {
      await createMachine(h.runtime, "crashy", definition);
      const ids: string[] = [];
      for (let i = 0; i < EXECUTIONS; i++) {
        const items = Array.from({ length: ITEMS }, (_, j) => ({ n: i * 100 + j }));
        const input = { items };
        ids.push((await h.runtime.startExecution("crashy", { input, name: `x${i}` })).executionId);
      }
      await crashAt(h.prefix, point, after, { CALLS_FILE: calls, TASK_DELAY_MS: "30" });
      // The survivor logs its calls to the same file, as the dead worker did (fixtures/handlers.ts).
      const logged = functionRunner({
        ...handlers,
        double: (input, request) => {
          appendFileSync(calls, `${request.taskId}\n`);
          return handlers.double!(input, request);
        },
      });
      await h.startWorker({ taskRunners: [logged] });
      for (const [i, id] of ids.entries()) {
        const record = await h.runtime.waitForExecution(id, 20_000);
        expect(record.status).toBe("SUCCEEDED");
        const items = Array.from({ length: ITEMS }, (_, j) => ({ n: i * 100 + j }));
        expect(record.output).toEqual({ items, doubled: items.map((it) => ({ n: it.n * 2 })) });
        const history = await fullHistory(h.runtime, id);
        expect(historyProblems(history)).toEqual([]);
        expect(history.filter((e) => e.type === "MapIterationSucceeded")).toHaveLength(ITEMS);
        expect(history.filter((e) => e.type === "ExecutionSucceeded")).toHaveLength(1);
        // The hash chain is whole: a crash between a commit and its acknowledgement
        // neither forks it nor leaves a hole (the hash is written by the commit itself).
        const audit = verifyAudit((await h.runtime.exportAudit(id)).join("\n"));
        expect(audit).toMatchObject({ ok: true, head: { eventId: history.length } });
      }
    });
    return readFileSync(calls, "utf8").trim().split("\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.concurrent("a worker killed with SIGKILL loses nothing and applies nothing twice", () => {
  it("(a) after computing a step, before its commit", async () => {
    await crashThenRecover("beforeCommit", 25);
  }, 40_000);

  it("(b) after the commit, before acknowledging the job", async () => {
    await crashThenRecover("afterCommit", 25);
  }, 40_000);

  it("(c) during a task: the attempt re-runs with the same idempotency key", async () => {
    const calls = await crashThenRecover("duringTask", 5);
    const counts = new Map<string, number>();
    for (const id of calls) counts.set(id, (counts.get(id) ?? 0) + 1);
    // Each attempt was called once, except the ones the crash interrupted, which were called again with their key.
    expect([...counts.values()].some((n) => n > 1)).toBe(true);
    expect(counts.size).toBe(EXECUTIONS * ITEMS);
  }, 40_000);

  it("(d) while Map children run", async () => {
    await crashThenRecover("afterCommit:child", 12);
  }, 40_000);

  // The Map's last child's end makes its parent collect the children's outputs from the
  // join's hash (runtime/store/scripts/commit-transition.ts, `collect`): a crash before that
  // commit, or after it and before the job is acknowledged, loses no output.
  it.each(["beforeCommit:collect", "afterCommit:collect"])(
    "(f) %s: around the commit that collects a Map's outputs",
    async (point) => {
      await crashThenRecover(point, 3);
    },
    40_000,
  );

  // A 400-state Pass chain runs as chained commits of batched steps inside one job
  // (runtime/commit/transition.ts, "Chaining", "Batching"); a crash in the middle of that chain
  // must leave the run to be picked up again.
  it.each(["beforeCommit", "afterCommit"])(
    "(e) %s in the middle of a chain of transitions run by one job",
    async (point) => {
      const states: Record<string, object> = {};
      for (let i = 0; i < 400; i++)
        states[`P${i}`] =
          i < 399
            ? { Type: "Pass", Result: i, ResultPath: `$.p${i}`, Next: `P${i + 1}` }
            : { Type: "Pass", End: true };
      await withHarness(async (h) => {
        await createMachine(h.runtime, "long", { StartAt: "P0", States: states });
        const { executionId } = await h.runtime.startExecution("long", { input: {} });
        await crashAt(h.prefix, point, 2);
        await h.startWorker();
        const record = await h.runtime.waitForExecution(executionId, 20_000);
        expect(record.status).toBe("SUCCEEDED");
        expect(record.output).toEqual(
          Object.fromEntries(Array.from({ length: 399 }, (_, i) => [`p${i}`, i])),
        );
        const history = await fullHistory(h.runtime, executionId);
        expect(historyProblems(history)).toEqual([]);
        expect(history.filter((e) => e.type === "PassStateEntered")).toHaveLength(400);
      });
    },
    40_000,
  );
});
