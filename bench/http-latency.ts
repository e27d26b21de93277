/**
 * HTTP latency and throughput of the whole service: API + runtime + worker on the
 * local Redis, over a real socket.
 *
 *   npx tsx bench/http-latency.ts [--requests N] [--concurrency C] [--workers W]
 *
 * 1. latency: one client, N sequential `POST /v1/state-machines/:name/executions?wait=5`
 *    of a 3-state Pass machine; each measures start → SUCCEEDED answer. Prints p50/p99.
 * 2. throughput: C clients start executions (no wait) for a fixed count; prints
 *    starts per second, then how long the workers took to finish them all.
 *
 * Targets on the reference machine: p50 ≤ 5 ms, ≥ 1,000 starts/s.
 * Uses a random Redis prefix and deletes its keys afterwards.
 */
import { randomBytes } from "node:crypto";
import { Agent } from "node:http";
import { countOption, postJson } from "./harness.js";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { buildServer } from "../api/server.js";
import { createRedisRuntime } from "../runtime/runtime.js";
import { startWorker } from "../runtime/worker/worker.js";

const REQUESTS = countOption("requests", 2000);
const CONCURRENCY = countOption("concurrency", 32);
const WORKERS = countOption("workers", 1);
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

async function post(
  port: number,
  path: string,
  body: unknown,
): Promise<{ status: number; body: any }> {
  const { status, text } = await postJson(agent, port, path, body);
  return { status, body: JSON.parse(text) };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const prefix = `stepwise-bench-${randomBytes(4).toString("hex")}`;
  const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
  const workers = await Promise.all(
    Array.from({ length: WORKERS }, () => startWorker({ redisUrl: REDIS_URL, prefix })),
  );
  // As `stepwise serve` does: its starts are advanced by the worker in this process.
  await runtime.advanceStartsWith(workers[0]!);
  const app = await buildServer({ runtime, logger: false });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const port = (app.server.address() as AddressInfo).port;
  const redis = new Redis(REDIS_URL);
  try {
    const created = await post(port, "/v1/state-machines", {
      name: "three-passes",
      definition: {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Next: "B" },
          B: { Type: "Pass", Next: "C" },
          C: { Type: "Pass", End: true },
        },
      },
    });
    if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);

    // Warm-up: JIT, connections, BullMQ scripts.
    for (let i = 0; i < 200; i++)
      await post(port, "/v1/state-machines/three-passes/executions?wait=5", {});

    const latencies: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = process.hrtime.bigint();
      const r = await post(port, "/v1/state-machines/three-passes/executions?wait=5", {
        input: { i },
      });
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (r.body.status !== "SUCCEEDED")
        throw new Error(`execution ended ${JSON.stringify(r.body)}`);
    }
    latencies.sort((a, b) => a - b);
    console.log(
      `start→complete (?wait=), ${REQUESTS} sequential: p50 ${percentile(latencies, 50).toFixed(2)} ms, ` +
        `p90 ${percentile(latencies, 90).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms`,
    );

    const total = REQUESTS * 2;
    let next = 0;
    const ids: string[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < total) {
          next++;
          const r = await post(port, "/v1/state-machines/three-passes/executions", { input: {} });
          if (r.status !== 201) throw new Error(`start failed: ${JSON.stringify(r.body)}`);
          ids.push(r.body.executionId);
        }
      }),
    );
    const startSeconds = (performance.now() - t0) / 1000;
    console.log(
      `starts: ${total} with ${CONCURRENCY} concurrent clients in ${startSeconds.toFixed(2)} s = ` +
        `${Math.round(total / startSeconds)} starts/s`,
    );
    for (const id of ids) await runtime.waitForExecution(id, 60_000);
    const allSeconds = (performance.now() - t0) / 1000;
    console.log(
      `completed: all ${total} SUCCEEDED after ${allSeconds.toFixed(2)} s = ` +
        `${Math.round(total / allSeconds)} executions/s end to end (${WORKERS} worker(s))`,
    );
  } finally {
    await app.close();
    await Promise.all(workers.map((w) => w.close()));
    await runtime.close();
    let cursor = "0";
    do {
      const [nextCursor, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = nextCursor;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
    redis.disconnect();
    agent.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
