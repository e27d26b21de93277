import { Redis } from "ioredis";
import { expect, it } from "vitest";
import { Client } from "./client.js";
import { exited, logLine, spawnBin, testPrefix } from "./processes.js";
import { deleteKeys, REDIS_URL, THREE_PASSES } from "./stack.js";

/**
 * `stepwise serve` advances the executions it starts in its own worker, without a
 * queue job (runtime/executions/execution-store.ts `start`). What makes that safe
 * is the lease the start's script writes in the schedule: a serve that dies after
 * the start and before the first commit leaves the execution to whichever worker
 * comes next, which runs it once, from the start.
 */
const ADMIN = "admin-secret-0123456789abcdef";

it("an execution whose serve died before its first commit is run by the next worker, once", async () => {
  const env = {
    REDIS_URL,
    STEPWISE_PREFIX: testPrefix("serve-start-crash"),
    STEPWISE_API_KEYS: `ops:admin:${ADMIN}`,
    STEPWISE_LEASE_MS: "1000",
    HOST: "127.0.0.1",
    PORT: "0",
  };
  const redis = new Redis(REDIS_URL);
  const doomed = spawnBin(["serve"], {
    env: { ...env, STEPWISE_CRASH_AT: "beforeCommit", STEPWISE_CRASH_AFTER: "1" },
  });
  const survivor = { current: undefined as ReturnType<typeof spawnBin> | undefined };
  try {
    const first = new Client(String((await logLine(doomed, /ready: API /)).api), ADMIN);
    const created = await first.post("/v1/state-machines", THREE_PASSES);
    expect(created.status).toBe(201);
    // The reply may or may not get out before the process kills itself at its first commit.
    await first
      .post("/v1/state-machines/three/executions", { name: "once", input: { n: 7 } })
      .catch(() => undefined);
    expect(await exited(doomed.child)).toBeNull(); // SIGKILL
    // What it left: no queue job for the run, only the start's lease in the schedule.
    const keys = await redis.keys(`${env.STEPWISE_PREFIX}:*`);
    const jobs = keys.filter((k) => /:steps:(wait|active|delayed|prioritized)$/.test(k));
    expect(jobs).toEqual([]);
    const schedules = keys.filter((k) => k.endsWith(":sched"));
    const leases = (await Promise.all(schedules.map((k) => redis.zrange(k, "0", "-1")))).flat();
    expect(leases).toEqual(["r:three:once"]);
    const next = spawnBin(["serve"], { env });
    survivor.current = next;
    const client = new Client(String((await logLine(next, /ready: API /)).api), ADMIN);
    const id = "arn:aws:states:us-east-1:123456789012:execution:three:once";
    const record = await client.until(async () => {
      const r = await client.get(`/v1/executions/${encodeURIComponent(id)}`);
      return r.body.status === "SUCCEEDED" ? r.body : undefined;
    }, 20_000);
    expect(record.output).toEqual({ n: 7, a: 1, b: 2 });
    const history = (await client.get(`/v1/executions/${encodeURIComponent(id)}/history`)).body
      .items as { id: number; type: string }[];
    expect(history.map((e) => e.id)).toEqual(history.map((_, i) => i + 1));
    expect(history.filter((e) => e.type === "PassStateEntered")).toHaveLength(3);
    expect(history.at(-1)!.type).toBe("ExecutionSucceeded");
  } finally {
    doomed.child.kill("SIGKILL");
    if (survivor.current) {
      survivor.current.child.kill("SIGTERM");
      await exited(survivor.current.child);
    }
    await deleteKeys(redis, env.STEPWISE_PREFIX);
    redis.disconnect();
  }
});
