import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { isPayloadRef } from "../../engine/core/payload-ref.js";
import type { Json } from "../../engine/core/json.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { functionRunner } from "../../task-runners/function.js";
import {
  FAST,
  createMachine,
  fullHistory,
  harnessPerTest,
  historyProblems,
  until,
  type Harness,
  ONE_SHARD,
} from "./helpers.js";

// Large payloads by reference on Redis (engine/core/payload-ref.ts, runtime/payloads/payload-refs.ts):
// stored with the commit of the step that made them, read back by a later step of another
// worker (whose process never saw them), resolved whole for a task's resource.
let h: Harness;
let redis: Redis;
// Reads one shard's keys by name (helpers.ts ONE_SHARD).
harnessPerTest((fresh) => ({ h, redis } = fresh), ONE_SHARD);

const payloads = { refOverBytes: 4096, resolveMaxBytes: 1_000_000 };
const doc = { title: "Report", body: "b".repeat(50_000) };

describe("payloads by reference on Redis", () => {
  it("a later step on a fresh worker reads into a stored result, and a task gets it whole", async () => {
    const echoed: Json[] = [];
    const runners = [
      functionRunner({
        fetch: () => doc as unknown as Json,
        echo: (input) => {
          echoed.push(input);
          return { ok: true };
        },
      }),
    ];
    const first = await h.startWorker({ payloads, taskRunners: runners });
    await createMachine(h.runtime, "refs", {
      StartAt: "Fetch",
      States: {
        Fetch: { Type: "Task", Resource: "function:fetch", ResultPath: "$.doc", Next: "Hold" },
        Hold: { Type: "Wait", Seconds: 1, Next: "Read" },
        Read: {
          Type: "Pass",
          Parameters: { "title.$": "$.doc.title", "doc.$": "$.doc" },
          Next: "Send",
        },
        Send: { Type: "Task", Resource: "function:echo", ResultPath: "$.sent", End: true },
      },
    });
    const { executionId } = await h.runtime.startExecution("refs", { input: {}, name: "one" });
    await until(async () =>
      (await fullHistory(h.runtime, executionId)).some((e) => e.type === "WaitStateEntered"),
    );
    // The worker that stored it goes; one that never saw it reads into it.
    await first.close(2_000);
    await h.startWorker({ payloads, taskRunners: runners });
    const record = await h.runtime.waitForExecution(executionId, 10_000);
    expect(record.status).toBe("SUCCEEDED");
    const output = record.output as Record<string, Json>;
    expect(output.title).toBe("Report");
    expect(isPayloadRef(output.doc)).toBe(true);
    // The resource was given the document itself, not its reference.
    expect(echoed).toEqual([{ title: "Report", doc }]);

    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    for (const event of history) expect(JSON.stringify(event).length).toBeLessThan(4096);
    // Stored once, in the execution's payload hash, which goes with the execution.
    const key = h.runtime.keys.payloads("refs:one");
    const hash = (output.doc as unknown as { $ref: string }).$ref.split(":").at(-1)!;
    expect(await redis.hexists(key, hash)).toBe(1);
    await h.runtime.purgeExecution(executionId);
    expect(await redis.exists(key)).toBe(0);
  });

  it("an activity worker gets its input resolved, and may answer with more than 256 KiB", async () => {
    const payloads = { refOverBytes: 256 * 1024, resolveMaxBytes: 1_000_000 };
    await h.startWorker({ payloads });
    const big = { report: "r".repeat(300 * 1024) };
    await createMachine(h.runtime, "act", {
      StartAt: "Crunch",
      States: {
        Crunch: {
          Type: "Task",
          Resource: "arn:aws:states:us-east-1:123456789012:activity:crunch",
          ResultPath: "$.crunched",
          Next: "Again",
        },
        Again: {
          Type: "Task",
          Resource: "arn:aws:states:us-east-1:123456789012:activity:crunch",
          Parameters: { "previous.$": "$.crunched" },
          End: true,
        },
      },
    });
    const { executionId } = await h.runtime.startExecution("act", { input: {}, name: "a" });
    // The API's runtime, configured as its workers are (STEPWISE_PAYLOAD_STORE on both).
    const api = createRedisRuntime({ redisUrl: h.redisUrl, prefix: h.prefix, ...FAST, payloads });
    try {
      const first = await api.getActivityTask("crunch", 5, "w1");
      // Over AWS's 256 KiB: refused without the store, stored once with it.
      await expect(
        h.runtime.sendTaskSuccess(first!.taskToken, big as unknown as Json),
      ).rejects.toMatchObject({ code: "States.DataLimitExceeded" });
      await api.sendTaskSuccess(first!.taskToken, big as unknown as Json);
      const second = await api.getActivityTask("crunch", 5, "w1");
      expect(second!.input).toEqual({ previous: big });
      await api.sendTaskSuccess(second!.taskToken, { ok: true });
    } finally {
      await api.close();
    }
    const record = await h.runtime.waitForExecution(executionId, 10_000);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output).toEqual({ ok: true });
    const history = await fullHistory(h.runtime, executionId);
    for (const event of history) expect(JSON.stringify(event).length).toBeLessThan(4096);
  });
});
