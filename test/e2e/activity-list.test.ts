import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeKeys } from "../../runtime/store/keys.js";
import { ShardLayout } from "../../runtime/shards/shards.js";
import { REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * An activity task that ends before any worker takes it (a stop, a timeout) leaves
 * its activity's list, so a later poll does not wade through dead entries.
 */
let stack: Stack;
let redis: Redis;

beforeAll(async () => {
  stack = await startStack();
  redis = new Redis(REDIS_URL);
  await stack.client.post("/v1/state-machines", {
    name: "queued",
    definition: {
      StartAt: "Work",
      States: {
        Work: {
          Type: "Task",
          Resource: "arn:aws:states:us-east-1:123456789012:activity:nobody-polls",
          TimeoutSeconds: 3600,
          End: true,
        },
      },
    },
  });
  await stack.client.post("/v1/state-machines", {
    name: "brief",
    definition: {
      StartAt: "Work",
      States: {
        Work: {
          Type: "Task",
          Resource: "arn:aws:states:us-east-1:123456789012:activity:nobody-polls",
          TimeoutSeconds: 1,
          End: true,
        },
      },
    },
  });
});

afterAll(async () => {
  redis?.disconnect();
  await stack?.close();
});

/** Entries of the activity's lists: one per shard (runtime/shards/shards.ts). */
async function listed(): Promise<number> {
  const count = Number(await redis.get(makeKeys(stack.prefix).shardCount));
  const lengths = await Promise.all(
    new ShardLayout(stack.prefix, count).shards.map((keys) =>
      redis.llen(keys.activity("nobody-polls")),
    ),
  );
  return lengths.reduce((a, b) => a + b, 0);
}

describe("activity lists", () => {
  it("lose the entries of tasks stopped or timed out before a worker took them", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      ids.push(
        (await stack.client.post("/v1/state-machines/queued/executions", {})).body.executionId,
      );
    }
    const timing = (await stack.client.post("/v1/state-machines/brief/executions", {})).body
      .executionId as string;
    await stack.client.until(async () => ((await listed()) === 31 ? true : undefined));
    for (const id of ids) {
      expect(
        (await stack.client.post(`/v1/executions/${encodeURIComponent(id)}/stop`, {})).status,
      ).toBe(200);
    }
    await stack.client.until(async () => {
      const record = (await stack.client.get(`/v1/executions/${encodeURIComponent(timing)}`)).body;
      // The task's TimeoutSeconds: States.Timeout fails the execution.
      return record.status === "FAILED" && record.error === "States.Timeout" ? true : undefined;
    });
    expect(await listed()).toBe(0);
    // A poll now finds nothing at once.
    const poll = await stack.client.get("/v1/activities/nobody-polls/task?wait=0");
    expect(poll.status).toBe(204);
  });
});
