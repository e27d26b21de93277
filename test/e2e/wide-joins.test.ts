import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteKeys } from "../integration/helpers.js";
import { REDIS_URL } from "./stack.js";
import { exited, freePort, spawnStepwise, testPrefix, until } from "./processes.js";

/**
 * Issues 20 and 21: one execution with a 16,000-item Map, or a 16,000-branch
 * Parallel, used to kill `stepwise serve` (a stack overflow inside ioredis, then
 * a throw from its callback) and to kill it again after every restart. Now each
 * ends SUCCEEDED, the process keeps its pid, /health answers 200 throughout,
 * and a small execution succeeds afterwards. Through the API of a real
 * `stepwise serve` process on real Redis.
 */
const prefix = testPrefix("wide");
let child: ChildProcess;
let output: () => string;
let base: string;
let pid: number;
const health: { ok: number; other: string[] } = { ok: 0, other: [] };
let monitor: NodeJS.Timeout | undefined;

beforeAll(async () => {
  const port = await freePort();
  ({ child, output } = spawnStepwise(["serve"], {
    env: {
      REDIS_URL,
      PORT: String(port),
      STEPWISE_PREFIX: prefix,
      LOG_LEVEL: "warn",
      // Joins of 16,000 and 40,000 children write far more than AWS's 25,000 events.
      STEPWISE_MAX_HISTORY_EVENTS: "0",
    },
  }));
  pid = child.pid!;
  base = `http://127.0.0.1:${port}`;
  await until(async () => ((await fetch(`${base}/health`)).ok ? true : undefined), 30_000);
  monitor = setInterval(() => {
    fetch(`${base}/health`, { signal: AbortSignal.timeout(10_000) })
      .then((r) => (r.status === 200 ? health.ok++ : health.other.push(`HTTP ${r.status}`)))
      .catch((err: unknown) => health.other.push(String(err)));
  }, 250);
}, 40_000);

afterAll(async () => {
  clearInterval(monitor);
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
    await exited(child);
  }
  await deleteKeys(REDIS_URL, prefix);
});

async function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

async function runToEnd(machine: string, input: unknown): Promise<any> {
  const started = await post(`/v1/state-machines/${machine}/executions`, { input });
  expect(started.status).toBe(201);
  const id = encodeURIComponent(started.body.executionId as string);
  return until(async () => {
    const r = await fetch(`${base}/v1/executions/${id}`);
    const record = (await r.json()) as { status: string };
    return record.status === "RUNNING" ? undefined : record;
  }, 590_000);
}

const onePass = { StartAt: "P", States: { P: { Type: "Pass", End: true } } };

describe("wide joins through `stepwise serve`", () => {
  it("creates a Map machine and a 16,000-branch Parallel machine (under 1 MB of definition)", async () => {
    const map = await post("/v1/state-machines", {
      name: "wide-map",
      definition: {
        StartAt: "M",
        States: { M: { Type: "Map", ItemProcessor: onePass, MaxConcurrency: 0, End: true } },
      },
    });
    expect(map.status).toBe(201);
    const parallel = await post("/v1/state-machines", {
      name: "wide-parallel",
      definition: {
        StartAt: "Par",
        States: {
          Par: {
            Type: "Parallel",
            // Names in base 36 keep the definition under the 1 MiB body limit.
            Branches: Array.from({ length: 16_000 }, (_, i) => ({
              StartAt: i.toString(36),
              States: { [i.toString(36)]: { Type: "Pass", End: true } },
            })),
            End: true,
          },
        },
      },
    });
    expect(parallel.status).toBe(201);
  }, 30_000);

  // The two run at once: each is bound by its own commits' round trips (one
  // execution's commits take turns), so together they take about as long as the larger.
  // Wider Maps (40,000 items, about what 256 KiB of input holds) are in
  // `bench/redis-bench.ts map`: the suite has a time budget.
  it("a Map of 16,000 items (the size that crashed) and a Parallel of 16,000 branches both SUCCEED", async () => {
    const items16 = Array.from({ length: 16_000 }, (_, i) => i);
    const [map16, parallel] = await Promise.all([
      runToEnd("wide-map", items16),
      runToEnd("wide-parallel", { x: 1 }),
    ]);
    expect(map16.status).toBe("SUCCEEDED");
    expect(map16.output).toEqual(items16);
    expect(parallel.status).toBe("SUCCEEDED");
    expect(parallel.output).toHaveLength(16_000);
    expect(parallel.output.every((o: unknown) => JSON.stringify(o) === '{"x":1}')).toBe(true);
  }, 600_000);

  it("afterwards: the same process (pid) serves a small execution; /health was 200 throughout", async () => {
    const small = await post("/v1/state-machines", { name: "small", definition: onePass });
    expect(small.status).toBe(201);
    const done = await post("/v1/state-machines/small/executions?wait=20", { input: { ok: 1 } });
    expect(done.body).toMatchObject({ status: "SUCCEEDED", output: { ok: 1 } });
    expect(child.exitCode).toBe(null);
    expect(child.pid).toBe(pid);
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect(health.other).toEqual([]);
    expect(health.ok).toBeGreaterThan(0);
    expect(output()).not.toContain("Maximum call stack size exceeded");
  }, 30_000);
});
