import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { functionRunner } from "../../task-runners/function.js";
import { handlers } from "./fixtures/handlers.js";
import {
  createMachine,
  fullHistory,
  harness,
  historyProblems,
  startRedis,
  type Harness,
} from "./helpers.js";

// 200 executions are in flight (in waits, tasks, Map iterations and plain
// transitions) when their Redis restarts; with AOF, none is lost.
const N = 200;

let redis: Awaited<ReturnType<typeof startRedis>>;
let h: Harness;
beforeAll(async () => {
  redis = await startRedis();
  h = await harness({ redisUrl: redis.url });
});
afterAll(async () => {
  await h.close();
  await redis.stop();
});

describe("a Redis restart in the middle of 200 executions", () => {
  it("loses none of them", async () => {
    await h.startWorker({ taskRunners: [functionRunner(handlers)], concurrency: 32 });
    await createMachine(h.runtime, "survive", {
      StartAt: "A",
      States: {
        A: { Type: "Pass", Next: "Nap" },
        Nap: { Type: "Wait", Seconds: 1, Next: "Fan" },
        Fan: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemProcessor: {
            StartAt: "D",
            States: { D: { Type: "Task", Resource: "function:double", End: true } },
          },
          ResultPath: "$.doubled",
          Next: "Z",
        },
        Z: { Type: "Pass", End: true },
      },
    });
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      ids.push(
        (
          await h.runtime.startExecution("survive", {
            input: { items: [{ n: i }, { n: 1000 + i }] },
            name: `r${i}`,
          })
        ).executionId,
      );
    }
    await new Promise((r) => setTimeout(r, 700));
    await redis.restart();
    for (const [i, id] of ids.entries()) {
      const record = await h.runtime.waitForExecution(id, 30_000);
      expect(record.status).toBe("SUCCEEDED");
      expect(record.output).toEqual({
        items: [{ n: i }, { n: 1000 + i }],
        doubled: [{ n: 2 * i }, { n: 2000 + 2 * i }],
      });
      expect(historyProblems(await fullHistory(h.runtime, id))).toEqual([]);
    }
  }, 60_000);
});
