import { Redis } from "ioredis";
import { expect, it } from "vitest";
import { Client } from "./client.js";
import { exited, logLine, spawnBin, testPrefix } from "./processes.js";
import { deleteKeys, REDIS_URL, THREE_PASSES } from "./stack.js";

/**
 * What a `?wait=` start through `stepwise serve` asks of Redis, watched with
 * MONITOR: the start's script and the commit's, nothing else on the execution's
 * keys. The start's script answers the root run's snapshot, so the worker in the
 * same process steps it without a load (store/scripts/start-execution.ts); the
 * commit tells this process's waiters the end with its result, so the answer
 * needs neither the `ended` message nor a read of the record
 * (executions/waiters.ts `endedHere`).
 */
const ADMIN = "admin-secret-0123456789abcdef";

it("a ?wait start through serve is two scripts on the execution's keys: the start and the commit", async () => {
  const env = {
    REDIS_URL,
    STEPWISE_PREFIX: testPrefix("serve-start-trips"),
    STEPWISE_API_KEYS: `ops:admin:${ADMIN}`,
    STEPWISE_START_RATE: "0",
    HOST: "127.0.0.1",
    PORT: "0",
  };
  const redis = new Redis(REDIS_URL);
  let monitor: Redis | undefined;
  const serve = spawnBin(["serve"], { env });
  try {
    const client = new Client(String((await logLine(serve, /ready: API /)).api), ADMIN);
    const created = await client.post("/v1/state-machines", THREE_PASSES);
    expect(created.status).toBe(201);
    const start = (name: string) =>
      client.post(`/v1/state-machines/three/executions?wait=5`, { name, input: { n: 7 } });
    // The first wait opens the process's subscription.
    expect((await start("warm")).body.status).toBe("SUCCEEDED");

    const exec = `three:counted`;
    const seen: { source: string; args: string[] }[] = [];
    const onCommand = (_time: string, args: string[], source: string) => {
      if (args.some((a) => typeof a === "string" && a.includes(exec))) seen.push({ source, args });
    };
    // Watched for this one start only: MONITOR sees every client of the shared Redis.
    monitor = await redis.monitor();
    monitor.on("monitor", onCommand);
    const answer = await start("counted");
    // Let anything the process sends after its answer show too.
    await new Promise((r) => setTimeout(r, 300));
    monitor.disconnect();

    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      executionId: `arn:aws:states:us-east-1:123456789012:execution:${exec}`,
      status: "SUCCEEDED",
      output: { n: 7, a: 1, b: 2 },
    });
    expect(answer.body.stoppedAt).toEqual(expect.any(String));
    const fromClients = seen.filter((c) => c.source !== "lua").map((c) => c.args[0]!.toLowerCase());
    // start-execution and commit-transition; no load-transition, no HGET/HGETALL of the record.
    expect(fromClients).toEqual(["evalsha", "evalsha"]);
    const fromScripts = seen.filter((c) => c.source === "lua").map((c) => c.args[0]!.toUpperCase());
    expect(fromScripts).toContain("PUBLISH");

    // What it answered is what it stored.
    const record = (
      await client.get(`/v1/executions/${encodeURIComponent(answer.body.executionId)}`)
    ).body;
    expect(record).toMatchObject({
      status: answer.body.status,
      output: answer.body.output,
      startedAt: answer.body.startedAt,
      stoppedAt: answer.body.stoppedAt,
    });
  } finally {
    monitor?.disconnect();
    serve.child.kill("SIGTERM");
    await exited(serve.child);
    await deleteKeys(redis, env.STEPWISE_PREFIX);
    redis.disconnect();
  }
});
