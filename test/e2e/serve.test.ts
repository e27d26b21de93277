import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { exited, freePort, logLines, spawnStepwise, until, type Spawned } from "./processes.js";
import { sample } from "./prometheus.js";
import { deleteKeys } from "../integration/helpers.js";
import { REDIS_URL } from "./stack.js";

/**
 * `stepwise serve` as a process: configured from the environment only, API and worker
 * in one process, a warning (and 127.0.0.1) without API keys, a clean exit on SIGTERM
 * (by itself: nothing forces it). `stepwise worker` likewise, with its own /metrics.
 */
const children: ChildProcess[] = [];
/** Each run uses its own key prefix; all of them are removed at the end. */
const prefixes: string[] = [];
function prefix(): string {
  const p = `stepwise-e2e-serve-${randomBytes(4).toString("hex")}`;
  prefixes.push(p);
  return p;
}

afterAll(async () => {
  for (const p of prefixes) await deleteKeys(REDIS_URL, p);
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

function serve(
  env: Record<string, string>,
  args: string[] = [],
  command: "serve" | "worker" = "serve",
): Spawned {
  const spawned = spawnStepwise([command, ...args], { env });
  children.push(spawned.child);
  return spawned;
}

describe("stepwise serve", () => {
  it("serves API and worker from environment settings; exits cleanly on SIGTERM", async () => {
    const port = await freePort();
    const secret = "serve-test-secret-0123456789";
    const { child, output } = serve({
      REDIS_URL,
      PORT: String(port),
      STEPWISE_PREFIX: prefix(),
      STEPWISE_API_KEYS: `ops:admin:${secret}`,
      LOG_LEVEL: "info",
    });
    const base = `http://127.0.0.1:${port}`;
    await until(async () => ((await fetch(`${base}/health`)).ok ? true : undefined));
    const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
    const created = await fetch(`${base}/v1/state-machines`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "s",
        definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
      }),
    });
    expect(created.status).toBe(201);
    const run = await fetch(`${base}/v1/state-machines/s/executions?wait=10`, {
      method: "POST",
      headers,
      body: JSON.stringify({ input: { x: 1 } }),
    });
    expect(await run.json()).toMatchObject({ status: "SUCCEEDED", output: { x: 1 } });
    expect(output()).toContain('"level":30'); // pino JSON lines
    // An execution that fails gets one log line naming its error.
    await fetch(`${base}/v1/state-machines`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "f",
        definition: { StartAt: "F", States: { F: { Type: "Fail", Error: "Boom.Error" } } },
      }),
    });
    await fetch(`${base}/v1/state-machines/f/executions?wait=10`, {
      method: "POST",
      headers,
      body: JSON.stringify({}),
    });
    const failure = await until(async () =>
      logLines(output()).find((l) => l.error === "Boom.Error" && l.status === "FAILED"),
    );
    expect(failure).toMatchObject({ level: 40 });
    // One /metrics for both halves: the worker's transitions next to the API's series.
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(sample(metrics, "stepwise_transitions_total", { result: "committed" })).toBeGreaterThan(
      0,
    );
    expect(sample(metrics, "stepwise_transition_latency_seconds_count")).toBeGreaterThan(0);
    // Lost job locks (runtime/worker/lock-loss.ts): none in a run this small, but the series is there.
    expect(sample(metrics, "stepwise_job_locks_lost_total")).toBe(0);
    expect(sample(metrics, "stepwise_executions", { status: "SUCCEEDED" })).toBe(1);
    expect(sample(metrics, "process_resident_memory_bytes")).toBeGreaterThan(0);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
  }, 40_000);

  it("without API keys binds to 127.0.0.1 only and warns", async () => {
    const port = await freePort();
    const { child, output } = serve(
      {
        REDIS_URL,
        PORT: String(port),
        HOST: "0.0.0.0",
        STEPWISE_API_KEYS: "",
        STEPWISE_PREFIX: prefix(),
      },
      ["--no-worker"],
    );
    await until(async () =>
      (await fetch(`http://127.0.0.1:${port}/health`)).ok ? true : undefined,
    );
    expect(output()).toContain("binds to 127.0.0.1 only");
    expect(output()).toContain("HOST=0.0.0.0 ignored");
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
  }, 40_000);

  it("refuses malformed key configuration with exit 2", async () => {
    const { child, output } = serve({ REDIS_URL, STEPWISE_API_KEYS: "ops:root:short" });
    expect(await exited(child)).toBe(2);
    expect(output()).toContain("STEPWISE_API_KEYS");
  }, 20_000);

  it.each(["serve", "worker"] as const)(
    "%s refuses an unreadable or malformed STEPWISE_MODEL_ENDPOINTS with exit 2",
    async (command) => {
      const missing = serve(
        { REDIS_URL, STEPWISE_MODEL_ENDPOINTS: "/nonexistent/models.yaml" },
        [],
        command,
      );
      expect(await exited(missing.child)).toBe(2);
      expect(missing.output()).toContain(
        "STEPWISE_MODEL_ENDPOINTS: cannot read /nonexistent/models.yaml",
      );
    },
    20_000,
  );
});

describe("stepwise worker", () => {
  it("serves its own transition metrics on --metrics-port; exits by itself on SIGTERM", async () => {
    const p = prefix();
    const { child, output } = serve(
      { REDIS_URL, STEPWISE_PREFIX: p },
      ["--metrics-port", "0", "--concurrency", "4"],
      "worker",
    );
    const port = await until(async () => {
      const match = /metrics on port (\d+)/.exec(output());
      return match ? Number(match[1]) : undefined;
    });
    // Executions started from this process; the worker process advances them.
    const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix: p });
    try {
      await runtime.createStateMachine("two", {
        StartAt: "A",
        States: { A: { Type: "Pass", Next: "B" }, B: { Type: "Pass", End: true } },
      });
      for (let i = 0; i < 2; i++) {
        const { executionId } = await runtime.startExecution("two", { input: { i } });
        expect((await runtime.waitForExecution(executionId, 10_000)).status).toBe("SUCCEEDED");
      }
    } finally {
      await runtime.close();
    }
    const reply = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toContain("text/plain");
    const text = await reply.text();
    // Each execution is three transitions (Started, A, B), however many jobs they took.
    const committed = sample(text, "stepwise_transitions_total", { result: "committed" });
    expect(committed).toBe(6);
    expect(sample(text, "stepwise_transition_latency_seconds_count")).toBe(committed);
    expect(sample(text, "stepwise_job_locks_lost_total")).toBe(0);
    expect(sample(text, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    // Only the worker's own series: the API's and the runtime's live in the API process.
    expect(sample(text, "stepwise_runtime_metrics_up")).toBeUndefined();
    const other = await fetch(`http://127.0.0.1:${port}/v1/executions`);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: string }).error).toBe("RouteNotFound");
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
  }, 40_000);

  it("takes the metrics port from STEPWISE_METRICS_PORT and refuses a bad one with exit 2", async () => {
    const port = await freePort();
    const { child, output } = serve(
      { REDIS_URL, STEPWISE_PREFIX: prefix(), STEPWISE_METRICS_PORT: String(port) },
      [],
      "worker",
    );
    await until(async () =>
      (await fetch(`http://127.0.0.1:${port}/metrics`)).ok ? true : undefined,
    );
    expect(output()).toContain(`metrics on port ${port}`);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);

    const bad = serve({ REDIS_URL, STEPWISE_METRICS_PORT: "http" }, [], "worker");
    expect(await exited(bad.child)).toBe(2);
    expect(bad.output()).toContain("STEPWISE_METRICS_PORT");
  }, 40_000);
});
