import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisRuntime, type RedisRuntime } from "../../runtime/runtime.js";
import { canStartCluster, startCluster, type LocalCluster } from "../../scripts/redis-cluster.js";
import { createMachine, exited, randomPrefix, spawnWorker } from "./helpers.js";

/**
 * A 3-master Redis Cluster started here (issue 19): executions spread over the
 * masters by shard, two worker processes share them, one is SIGKILLed midway,
 * and every execution still ends as it should.
 */
const supportsCluster = canStartCluster();
if (!supportsCluster) {
  console.warn(
    "cluster test skipped: no redis-server 5 or later (cluster creation needs redis-cli --cluster)",
  );
}

describe.skipIf(!supportsCluster)("a Redis Cluster of 3 masters", () => {
  let cluster: LocalCluster;
  let runtime: RedisRuntime;
  const prefix = randomPrefix();
  beforeAll(async () => {
    cluster = await startCluster();
    runtime = createRedisRuntime({
      redisUrl: "redis://unused",
      redisCluster: cluster.nodes,
      prefix,
      leaseMs: 1_000,
      lockDurationMs: 1_500,
      stalledIntervalMs: 500,
    });
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
    await cluster?.stop();
  });

  it("spreads 1,000 mixed executions over every master, and two workers (one SIGKILLed midway) finish them all", async () => {
    const layout = await runtime.shardLayout();
    expect(layout.count).toBe(16);
    await createMachine(runtime, "fan", {
      StartAt: "Fan",
      States: {
        Fan: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemProcessor: {
            StartAt: "Nap",
            States: {
              Nap: { Type: "Wait", Seconds: 1, Next: "Tag" },
              Tag: { Type: "Pass", Parameters: { "v.$": "$" }, End: true },
            },
          },
          End: true,
        },
      },
    });
    await createMachine(runtime, "sleep", {
      StartAt: "Nap",
      States: {
        Nap: { Type: "Wait", Seconds: 2, Next: "Done" },
        Done: { Type: "Pass", Result: "rested", End: true },
      },
    });
    await createMachine(runtime, "ask", {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "arn:aws:states:::activity:cluster-ask",
          TimeoutSeconds: 120,
          End: true,
        },
      },
    });
    await runtime.createActivity("cluster-ask");
    const env = {
      STEPWISE_REDIS_CLUSTER: cluster.nodes.join(","),
      STEPWISE_CONCURRENCY: "16",
    };
    const workers = [spawnWorker(prefix, env), spawnWorker(prefix, env)];
    await Promise.all(workers.map((w) => w.ready));

    const kinds = ["fan", "sleep", "ask"] as const;
    const started: { id: string; kind: (typeof kinds)[number]; n: number }[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, async (_, j) => {
          const n = i + j;
          const kind = kinds[n % 3]!;
          const { executionId } = await runtime.startExecution(kind, {
            name: `x${n}`,
            input: { n, items: [n, n + 1] },
          });
          return { id: executionId, kind, n };
        }),
      );
      started.push(...batch);
    }
    // Every master holds executions of this deployment.
    for (const node of cluster.nodes) {
      const [host, port] = node.split(":");
      const redis = new Redis({ host: host!, port: Number(port) });
      const [, keys] = await redis.scan("0", "MATCH", `${prefix}:*:x:*`, "COUNT", 100_000);
      redis.disconnect();
      expect(keys.length).toBeGreaterThan(0);
    }

    // Answer the activity tasks (callbacks with task tokens) while the worker dies.
    const asks = started.filter((s) => s.kind === "ask").length;
    let answered = 0;
    const answering = (async () => {
      while (answered < asks) {
        const task = await runtime.getActivityTask("cluster-ask", 2);
        if (!task) continue;
        await runtime.sendTaskSuccess(task.taskToken, { answer: (task.input as { n: number }).n });
        answered++;
      }
    })();
    await new Promise((r) => setTimeout(r, 1_500));
    workers[0]!.kill("SIGKILL");
    await exited(workers[0]!);

    try {
      await answering;
      for (const { id, kind, n } of started) {
        const done = await runtime.waitForExecution(id, 60_000);
        expect(done.status, `${id}: ${done.error ?? ""} ${done.cause ?? ""}`).toBe("SUCCEEDED");
        if (kind === "fan") expect(done.output).toEqual([{ v: n }, { v: n + 1 }]);
        if (kind === "sleep") expect(done.output).toBe("rested");
        if (kind === "ask") expect(done.output).toEqual({ answer: n });
      }
      const listed = await runtime.listExecutions({ status: "SUCCEEDED", limit: 1000 });
      expect(listed.items.length).toBe(1000);
    } finally {
      for (const w of workers) w.kill("SIGTERM");
      await Promise.all(workers.map((w) => exited(w)));
    }
  }, 240_000);
});
