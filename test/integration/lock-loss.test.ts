import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { configureJsonataLimits, DEFAULT_JSONATA_LIMITS } from "../../engine/jsonata/limits.js";
import { isLockLoss } from "../../runtime/worker/lock-loss.js";
import {
  createMachine,
  deleteKeys,
  fullHistory,
  harness,
  historyProblems,
  randomPrefix,
  REDIS_URL,
  until,
  type Harness,
} from "./helpers.js";

/**
 * A job that outlives its BullMQ lock (runtime/worker/lock-loss.ts), on real Redis: the
 * errors BullMQ gives are the ones the worker counts, and a worker that loses a
 * lock warns once with the count, keeps it out of `onError`, and the execution
 * still ends once, its history intact.
 */

/** Holds the event loop: no lock renewal runs meanwhile. */
function busy(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

/** About 500,000 evaluation steps: JSONata's default budget for one state (engine/jsonata/limits.ts). */
const SUM_TO_99000 = "$reduce([1..99000], function($a, $b) { $a + $b })";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => configureJsonataLimits({ maxSteps: 10 * DEFAULT_JSONATA_LIMITS.maxSteps }));
afterAll(() => configureJsonataLimits(DEFAULT_JSONATA_LIMITS));

describe("a job that outlives its lock", () => {
  it("gets errors from BullMQ that isLockLoss knows, and only those", async () => {
    const prefix = randomPrefix();
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue("q", { connection, prefix });
    const errors: Error[] = [];
    const worker = new Worker(
      "q",
      async () => {
        // Twice the lock: it expires in Redis before the job can finish.
        busy(400);
      },
      { connection, prefix, lockDuration: 200, stalledInterval: 100, autorun: false },
    );
    worker.on("error", (err) => errors.push(err));
    worker.on("failed", (_job, err) => errors.push(err));
    cleanups.push(async () => {
      await worker.close(true);
      await queue.close();
      connection.disconnect();
      await deleteKeys(REDIS_URL, prefix);
    });
    await queue.add("j", {}, { jobId: "one" });
    void worker.run();
    await until(async () => errors.length > 0);
    expect(errors.map((e) => [e.message, isLockLoss(e)])).toEqual(
      errors.map((e) => [e.message, true]),
    );
  });

  it("is counted and told once by a Stepwise worker, not passed to onError, and harms nothing", async () => {
    const h: Harness = await harness();
    cleanups.push(() => h.close());
    const warned: { fields: Record<string, unknown>; msg: string }[] = [];
    const errors: unknown[] = [];
    let lost = 0;
    await h.startWorker({
      // A step that runs longer than the lock: its job's lock expires under it.
      lockDurationMs: 100,
      stalledIntervalMs: 50,
      onError: (err) => errors.push(err),
      onLockLost: () => (lost += 1),
      logger: {
        warn: (fields: Record<string, unknown>, msg: string) => warned.push({ fields, msg }),
        error: () => {},
      } as never,
    });
    // Ten times JSONata's default budget of evaluation steps (raised for this file):
    // about a second of CPU here, ten times the lock, so that even a much faster
    // machine holds its event loop past the lock.
    await createMachine(h.runtime, "slow", {
      QueryLanguage: "JSONata",
      StartAt: "Slow",
      States: {
        Slow: {
          Type: "Pass",
          Output: `{% $sum($map([1..10], function($i) { ${SUM_TO_99000} })) %}`,
          Next: "Done",
        },
        Done: { Type: "Pass", End: true },
      },
    });
    const { executionId } = await h.runtime.startExecution("slow", { input: {} });
    const record = await h.runtime.waitForExecution(executionId, 30_000);
    expect(record).toMatchObject({ status: "SUCCEEDED", output: 49005495000 });
    // The slow step's job had its lock expire under it (100 ms, renewed every 25 ms by a blocked loop).
    await until(async () => lost > 0);
    expect(warned[0]?.msg).toMatch(/^worker: 1 job outlived its 100 ms lock \(STEPWISE_LOCK_MS\)/);
    expect(warned[0]?.fields).toMatchObject({ lockLost: 1 });
    expect(errors.filter(isLockLoss)).toEqual([]);
    expect(errors).toEqual([]);
    // Run again elsewhere or not, each step is in the history once.
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history.map((e) => e.type)).toEqual([
      "ExecutionStarted",
      "PassStateEntered",
      "PassStateExited",
      "PassStateEntered",
      "PassStateExited",
      "ExecutionSucceeded",
    ]);
  }, 40_000);
});
