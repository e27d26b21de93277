import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SPAWN_BATCH } from "../../engine/flow/join.js";
import { deleteKeys } from "../integration/helpers.js";
import { REDIS_URL } from "./stack.js";
import { exited, logLine, spawnBin, testPrefix, until, type Spawned } from "./processes.js";

/**
 * Issues 20 and 21: one execution with a 16,000-item Map, or a 16,000-branch
 * Parallel, used to kill `stepwise serve` (a stack overflow inside ioredis, then
 * a throw from its callback) and to kill it again after every restart. The cause
 * was a Redis call whose argument list grew with the join: now none does. A join
 * starts at most SPAWN_BATCH (1,000) children per step, the rest by ContinueJoin
 * steps from inputs kept apart, which the commit script writes in HSETs of 500;
 * the join's end collects its outputs in HMGETs of 1,000
 * (runtime/store/scripts/commit-transition.ts). Joins of 1,600 cross each of these
 * boundaries, as joins of 16,000 do: each ends SUCCEEDED, the process keeps its
 * pid, /health answers 200 throughout, and a small execution succeeds afterwards.
 * Through the API of the real `stepwise serve` (bin/stepwise.js) on real Redis.
 * The sizes that crashed, and a Map of 40,000 items, are in
 * `npx tsx bench/wide-joins.ts`, which prints their times.
 */
const WIDTH = SPAWN_BATCH + 600;
const prefix = testPrefix("wide");
let service: Spawned;
let base: string;
let pid: number;
const health: { ok: number; other: string[] } = { ok: 0, other: [] };
let monitor: NodeJS.Timeout | undefined;

beforeAll(async () => {
  service = spawnBin(["serve"], {
    env: { REDIS_URL, PORT: "0", HOST: "127.0.0.1", STEPWISE_PREFIX: prefix },
  });
  pid = service.child.pid!;
  base = String((await logLine(service, /ready: API /)).api);
  monitor = setInterval(() => {
    fetch(`${base}/health`, { signal: AbortSignal.timeout(10_000) })
      .then((r) => (r.status === 200 ? health.ok++ : health.other.push(`HTTP ${r.status}`)))
      .catch((err: unknown) => health.other.push(String(err)));
  }, 250);
}, 40_000);

afterAll(async () => {
  clearInterval(monitor);
  if (service && service.child.exitCode === null) {
    service.child.kill("SIGTERM");
    await exited(service.child);
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
  }, 110_000);
}

const onePass = { StartAt: "P", States: { P: { Type: "Pass", End: true } } };

describe("wide joins through `stepwise serve`", () => {
  it(`creates a Map machine and a ${WIDTH}-branch Parallel machine`, async () => {
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
            // Names in base 36, as in the bench, where 16,000 branches must fit in the 1 MiB body limit.
            Branches: Array.from({ length: WIDTH }, (_, i) => ({
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
  it(`a Map of ${WIDTH} items and a Parallel of ${WIDTH} branches both SUCCEED`, async () => {
    const items = Array.from({ length: WIDTH }, (_, i) => i);
    const [map, parallel] = await Promise.all([
      runToEnd("wide-map", items),
      runToEnd("wide-parallel", { x: 1 }),
    ]);
    expect(map.status).toBe("SUCCEEDED");
    expect(map.output).toEqual(items);
    expect(parallel.status).toBe("SUCCEEDED");
    expect(parallel.output).toHaveLength(WIDTH);
    expect(parallel.output.every((o: unknown) => JSON.stringify(o) === '{"x":1}')).toBe(true);
  }, 120_000);

  it("afterwards: the same process (pid) serves a small execution; /health was 200 throughout", async () => {
    const small = await post("/v1/state-machines", { name: "small", definition: onePass });
    expect(small.status).toBe(201);
    const done = await post("/v1/state-machines/small/executions?wait=20", { input: { ok: 1 } });
    expect(done.body).toMatchObject({ status: "SUCCEEDED", output: { ok: 1 } });
    expect(service.child.exitCode).toBe(null);
    expect(service.child.pid).toBe(pid);
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect(health.other).toEqual([]);
    expect(health.ok).toBeGreaterThan(0);
    expect(service.output()).not.toContain("Maximum call stack size exceeded");
  }, 30_000);
});
