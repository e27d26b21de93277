import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import { makeKeys } from "../../runtime/store/keys.js";
import { JobQueues } from "../../runtime/worker/queues.js";
import { bullConnection } from "../../runtime/store/redis.js";
import { longId, shortId, stepJobId } from "../../runtime/store/ids.js";
import { unpack } from "../../runtime/store/codec.js";
import {
  createMachine,
  fullHistory,
  harness,
  historyProblems,
  type Harness,
  ONE_SHARD,
} from "./helpers.js";

/**
 * An ended Map iteration or Parallel branch is deleted once its parent took its
 * end in (runtime/commit/ended-runs.ts, issue 21); the root run stays with the record.
 */
let h: Harness;
let redis: Redis;
beforeAll(async () => {
  // Reads one shard's keys by name (helpers.ts ONE_SHARD).
  h = await harness(ONE_SHARD);
  redis = new Redis(h.redisUrl);
  await h.startWorker();
});
afterAll(async () => {
  redis.disconnect();
  await h.close();
});

/** Keys of an execution's child runs and joins, found by SCAN. */
async function childKeys(exec: string, kinds = ["r", "i", "jr", "ji"]): Promise<string[]> {
  const base = h.runtime.keys.base;
  const found: string[] = [];
  for (const kind of kinds) {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(
        cursor,
        "MATCH",
        `${base}${kind}:${exec}/*`,
        "COUNT",
        1000,
      );
      cursor = next;
      found.push(...keys);
    } while (cursor !== "0");
  }
  return found;
}

async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("ended child runs", () => {
  it("a 100-item Map (each item a Parallel) leaves no child run, inbox or join behind", async () => {
    await createMachine(h.runtime, "fan", {
      StartAt: "Fan",
      States: {
        Fan: {
          Type: "Map",
          ItemProcessor: {
            StartAt: "Both",
            States: {
              Both: {
                Type: "Parallel",
                Branches: [
                  { StartAt: "A", States: { A: { Type: "Pass", End: true } } },
                  {
                    StartAt: "B",
                    States: { B: { Type: "Pass", Result: "b", End: true } },
                  },
                ],
                End: true,
              },
            },
          },
          End: true,
        },
      },
    });
    const input = Array.from({ length: 100 }, (_, i) => i);
    const { executionId } = await h.runtime.startExecution("fan", { input, name: "wide" });
    const record = await h.runtime.waitForExecution(executionId, 20_000);
    expect(record).toMatchObject({
      status: "SUCCEEDED",
      output: input.map((i) => [i, "b"]),
    });
    await until("the children's keys to go", async () =>
      (await childKeys("fan:wide")).length === 0 ? true : undefined,
    );
    // A success cannot be redriven: the root run went with its last commit too.
    expect(await redis.exists(h.runtime.keys.run("fan:wide"))).toBe(0);
    expect(historyProblems(await fullHistory(h.runtime, executionId))).toEqual([]);
  });

  it("a redelivered job of a deleted child is a harmless no-op", async () => {
    const exec = "fan:wide";
    const executionId = longId(exec);
    const before = await fullHistory(h.runtime, executionId);
    // The children, as the journal names them; their jobs again, as BullMQ would
    // hand them back after a crash, at every seq they went through.
    const journal = await redis.lrangeBuffer(h.runtime.keys.journal(exec), 0, -1);
    const runs = new Set(
      journal.map((e) => shortId((JSON.parse(unpack(e)) as { runId: string }).runId)),
    );
    runs.delete(exec);
    expect(runs.size).toBe(300);
    const jobs = [...runs]
      .slice(0, 20)
      .flatMap((run) => [0, 1, 2, 3].map((q) => [run, q] as const));
    const connection = bullConnection(h.redisUrl, "ended-runs-test");
    const queues = new JobQueues(connection, makeKeys(h.prefix));
    try {
      await queues.ensure(jobs.map(([run, q]) => `s${run}@${q}`).join(" "));
      await until("the jobs to be done", async () => {
        for (const [run, q] of jobs)
          if (await queues.steps.getJob(stepJobId(run, q))) return undefined;
        return true;
      });
    } finally {
      await queues.close();
      connection.disconnect();
    }
    expect(await childKeys(exec)).toEqual([]);
    expect(await fullHistory(h.runtime, executionId)).toEqual(before);
    expect((await h.runtime.describeExecution(executionId)).status).toBe("SUCCEEDED");
  });

  it("children stopped after their Map failed go too, with the join's outputs", async () => {
    await createMachine(h.runtime, "intolerant", {
      StartAt: "M",
      States: {
        M: {
          Type: "Map",
          ToleratedFailureCount: 0,
          ItemProcessor: {
            StartAt: "W",
            States: {
              W: { Type: "Wait", SecondsPath: "$.s", Next: "Check" },
              Check: {
                Type: "Choice",
                Choices: [{ Variable: "$.fail", IsPresent: true, Next: "Boom" }],
                Default: "Out",
              },
              Boom: { Type: "Fail", Error: "Item.Failed" },
              Out: { Type: "Pass", End: true },
            },
          },
          End: true,
        },
      },
    });
    const input: Json[] = [{ s: 0, fail: true }, { s: 60 }, { s: 60 }];
    const { executionId } = await h.runtime.startExecution("intolerant", { input, name: "f" });
    expect((await h.runtime.waitForExecution(executionId, 10_000)).status).toBe("FAILED");
    await until("the stopped iterations to end", async () => {
      const events = await fullHistory(h.runtime, executionId);
      return events.filter((e) => e.type === "MapIterationAborted").length === 2 ? true : undefined;
    });
    // The join's outputs too: it never collects, and its last child's end is taken in.
    await until("the children's keys to go", async () =>
      (await childKeys("intolerant:f")).length === 0 ? true : undefined,
    );
  });
  it("children of a stopped execution go once they have ended, with the join's outputs", async () => {
    await createMachine(h.runtime, "stopped", {
      StartAt: "M",
      States: {
        M: {
          Type: "Map",
          ItemProcessor: {
            StartAt: "W",
            States: { W: { Type: "Wait", SecondsPath: "$", End: true } },
          },
          End: true,
        },
      },
    });
    const { executionId } = await h.runtime.startExecution("stopped", {
      input: [0, 60, 60],
      name: "s",
    });
    await until("two iterations to wait", async () => {
      const events = await fullHistory(h.runtime, executionId);
      return events.filter((e) => e.type === "WaitStateEntered").length >= 3 ? true : undefined;
    });
    await h.runtime.stopExecution(executionId, {});
    await until("the children's keys to go", async () =>
      (await childKeys("stopped:s")).length === 0 ? true : undefined,
    );
    expect((await h.runtime.describeExecution(executionId)).status).toBe("ABORTED");
  });
});
