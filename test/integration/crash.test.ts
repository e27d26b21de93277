import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { verifyAudit } from "../../runtime/audit/verify.js";
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
// (runtime/crash.ts); a second worker must finish every execution correctly.
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

let h: Harness;
let dir: string;
beforeEach(async () => {
  h = await harness();
  dir = mkdtempSync(join(tmpdir(), "stepwise-crash-"));
  await createMachine(h.runtime, "crashy", definition);
});
afterEach(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

async function crashThenRecover(point: string, after: number): Promise<string[]> {
  const calls = join(dir, "calls.txt");
  const ids: string[] = [];
  for (let i = 0; i < EXECUTIONS; i++) {
    const items = Array.from({ length: ITEMS }, (_, j) => ({ n: i * 100 + j }));
    ids.push(
      (await h.runtime.startExecution("crashy", { input: { items }, name: `x${i}` })).executionId,
    );
  }
  const doomed = spawnWorker(h.prefix, {
    STEPWISE_CRASH_AT: point,
    STEPWISE_CRASH_AFTER: String(after),
    CALLS_FILE: calls,
    TASK_DELAY_MS: "30",
  });
  await exited(doomed);
  expect(doomed.signalCode).toBe("SIGKILL");
  const survivor = spawnWorker(h.prefix, { CALLS_FILE: calls });
  try {
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
  } finally {
    survivor.kill("SIGTERM");
    await exited(survivor);
  }
  return readFileSync(calls, "utf8").trim().split("\n");
}

describe("a worker killed with SIGKILL loses nothing and applies nothing twice", () => {
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
  // join's hash (runtime/scripts/commit-transition.ts, `collect`): a crash before that
  // commit, or after it and before the job is acknowledged, loses no output.
  it.each(["beforeCommit:collect", "afterCommit:collect"])(
    "(f) %s: around the commit that collects a Map's outputs",
    async (point) => {
      await crashThenRecover(point, 3);
    },
    40_000,
  );

  // A 400-state Pass chain runs as chained commits of batched steps inside one job
  // (runtime/transition.ts, "Chaining", "Batching"); a crash in the middle of that chain
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
      await createMachine(h.runtime, "long", { StartAt: "P0", States: states });
      const { executionId } = await h.runtime.startExecution("long", { input: {} });
      const doomed = spawnWorker(h.prefix, {
        STEPWISE_CRASH_AT: point,
        STEPWISE_CRASH_AFTER: "2",
      });
      await exited(doomed);
      expect(doomed.signalCode).toBe("SIGKILL");
      const survivor = spawnWorker(h.prefix, {});
      try {
        const record = await h.runtime.waitForExecution(executionId, 20_000);
        expect(record.status).toBe("SUCCEEDED");
        expect(record.output).toEqual(
          Object.fromEntries(Array.from({ length: 399 }, (_, i) => [`p${i}`, i])),
        );
        const history = await fullHistory(h.runtime, executionId);
        expect(historyProblems(history)).toEqual([]);
        expect(history.filter((e) => e.type === "PassStateEntered")).toHaveLength(400);
      } finally {
        survivor.kill("SIGTERM");
        await exited(survivor);
      }
    },
    40_000,
  );
});
