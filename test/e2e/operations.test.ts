import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findExecutable, startLocalRedis, type LocalRedis } from "../../cli/local-redis.js";
import { exited, freePort, logLine, spawnBin, testPrefix, type Spawned } from "./processes.js";
import { sample } from "./prometheus.js";
import { API_KEYS, startStack, type Stack } from "./stack.js";

/** /health, /metrics and /docs. */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

describe("operations", () => {
  it("/health is 200 while Redis answers", async () => {
    const reply = await stack.client.get("/health", { key: null });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: "ok", checks: { redis: "ok" } });
  });

  it("/metrics speaks the Prometheus text format with HTTP and runtime series", async () => {
    const { client } = stack;
    await client.post("/v1/state-machines", {
      name: "counted",
      definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
    });
    await client.post("/v1/state-machines/counted/executions?wait=5", {});
    const reply = await client.get("/metrics", { key: null });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toContain("text/plain");
    expect(reply.text).toMatch(/^# HELP /m);
    expect(reply.text).toContain(
      'stepwise_http_requests_total{method="POST",route="/v1/state-machines/:name/executions",status="201"}',
    );
    expect(reply.text).toContain("stepwise_http_request_duration_seconds_bucket");
    // Every sample line is `name{labels} value`.
    for (const line of reply.text.split("\n").filter((l) => l && !l.startsWith("#"))) {
      expect(line).toMatch(/^[a-z_:][a-z0-9_:]*(\{[^}]*\})? [-+0-9.eInfa]+$/);
    }
  });

  it("/metrics reports executions, timers, tokens, queues, the worker's transitions and the process", async () => {
    // A stack of its own, so every figure is exactly what this test did.
    const own = await startStack();
    try {
      const { client } = own;
      const machines = {
        quick: {
          StartAt: "A",
          States: { A: { Type: "Pass", Next: "B" }, B: { Type: "Pass", End: true } },
        },
        sleepy: { StartAt: "W", States: { W: { Type: "Wait", Seconds: 3600, End: true } } },
        asking: {
          StartAt: "Ask",
          States: {
            Ask: {
              Type: "Task",
              Resource: "arn:aws:states:::stepwise:waitForTaskToken",
              Parameters: { "token.$": "$$.Task.Token" },
              End: true,
            },
          },
        },
      };
      for (const [name, definition] of Object.entries(machines)) {
        expect((await client.post("/v1/state-machines", { name, definition })).status).toBe(201);
      }
      for (let i = 0; i < 3; i++) {
        const run = await client.post("/v1/state-machines/quick/executions?wait=10", {});
        expect(run.body.status).toBe("SUCCEEDED");
      }
      // An idempotent repeat starts nothing.
      await client.post("/v1/state-machines/quick/executions", { name: "same" });
      await client.post("/v1/state-machines/quick/executions", { name: "same" });
      const sleepy = await client.post("/v1/state-machines/sleepy/executions", {});
      await client.post("/v1/state-machines/asking/executions", {});

      // Parked: one Wait timer armed, one task token out, nothing left in the queue.
      const parked = await client.until(async () => {
        const text = (await client.get("/metrics", { key: null })).text;
        const settled =
          sample(text, "stepwise_pending_timers") === 1 &&
          sample(text, "stepwise_pending_task_tokens") === 1 &&
          sample(text, "stepwise_executions", { status: "SUCCEEDED" }) === 4;
        return settled ? text : undefined;
      });
      expect(sample(parked, "stepwise_runtime_metrics_up")).toBe(1);
      expect(sample(parked, "stepwise_executions", { status: "RUNNING" })).toBe(2);
      expect(sample(parked, "stepwise_executions", { status: "ABORTED" })).toBe(0);
      expect(sample(parked, "stepwise_executions_started_total")).toBe(6);
      expect(sample(parked, "stepwise_queue_jobs", { queue: "steps", state: "waiting" })).toBe(0);
      expect(sample(parked, "stepwise_queue_jobs", { queue: "tasks", state: "active" })).toBe(0);
      // The worker's series, counted in the same registry (as `stepwise serve` does).
      const committed = sample(parked, "stepwise_transitions_total", { result: "committed" });
      expect(committed).toBeGreaterThanOrEqual(4);
      expect(sample(parked, "stepwise_transition_latency_seconds_count")).toBe(committed);
      expect(sample(parked, "stepwise_transition_latency_seconds_bucket", { le: "+Inf" })).toBe(
        committed,
      );
      // prom-client's default series of the process.
      expect(sample(parked, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
      expect(sample(parked, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);

      // Stopping the sleeper disarms its timer and moves it to ABORTED.
      const id = encodeURIComponent(sleepy.body.executionId);
      expect((await client.post(`/v1/executions/${id}/stop`, {})).status).toBe(200);
      const after = (await client.get("/metrics", { key: null })).text;
      expect(sample(after, "stepwise_pending_timers")).toBe(0);
      expect(sample(after, "stepwise_executions", { status: "ABORTED" })).toBe(1);
      expect(sample(after, "stepwise_executions", { status: "RUNNING" })).toBe(1);
    } finally {
      await own.close();
    }
  });
});

/**
 * Redis failing the service: a redis-server of its own, whose ACL withdraws every
 * command of the service's user once the service is up, so its /health check and its
 * runtime's reads fail at once. (With Redis gone instead, /health is 503 as well, but
 * the runtime's reads wait for Redis to come back, and the scrape with them.) The API
 * alone (--no-worker): a worker refused its commands would only fill the log with errors.
 */
describe("operations, when Redis refuses the service", () => {
  const user = "stepwise";
  const password = "ops-refused-0123456789abcdef";
  let dir: string;
  let redis: LocalRedis;
  let admin: Redis;
  let service: Spawned;
  let api: string;

  beforeAll(async () => {
    // Started as `stepwise serve` starts its private one.
    dir = mkdtempSync(join(tmpdir(), "stepwise-e2e-redis-"));
    redis = await startLocalRedis({
      binary: findExecutable("redis-server", process.env.PATH) ?? "redis-server",
      port: await freePort(),
      dir,
    });
    admin = new Redis(redis.url);
    await admin.call("ACL", "SETUSER", user, "on", `>${password}`, "~*", "&*", "+@all");
    service = spawnBin(["serve", "--no-worker"], {
      env: {
        REDIS_URL: redis.url.replace("redis://", `redis://${user}:${password}@`),
        STEPWISE_PREFIX: testPrefix("ops"),
        PORT: "0",
        HOST: "127.0.0.1",
        STEPWISE_API_KEYS: API_KEYS,
      },
    });
    api = String((await logLine(service, /ready: API /)).api);
    await admin.call("ACL", "SETUSER", user, "-@all");
  });
  afterAll(async () => {
    // Its commands back, so it shuts down as a supervisor stops it: SIGTERM, exit 0.
    await admin?.call("ACL", "SETUSER", user, "+@all");
    let code: number | null = 0;
    if (service) {
      service.child.kill("SIGTERM");
      code = await exited(service.child);
    }
    admin?.disconnect();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    expect(code, service?.output()).toBe(0);
  });

  it("/health is 503 ServiceUnavailable when the check fails", async () => {
    const reply = await fetch(`${api}/health`);
    expect(reply.status).toBe(503);
    expect(((await reply.json()) as { error: string }).error).toBe("ServiceUnavailable");
  });

  it("/metrics still answers when the runtime cannot report, with stepwise_runtime_metrics_up 0", async () => {
    const reply = await fetch(`${api}/metrics`);
    expect(reply.status).toBe(200);
    const text = await reply.text();
    expect(sample(text, "stepwise_runtime_metrics_up")).toBe(0);
    expect(sample(text, "stepwise_executions", { status: "RUNNING" })).toBeUndefined();
    expect(sample(text, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
  });
});
