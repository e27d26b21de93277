// A durable transition against a bare queue hop, side by side on one fresh Redis (issue 19).
// Run: npx tsx bench/throughput-vs-bullmq.ts [executions=1000]
//
//  - Stepwise: `stepwise serve` (API and worker in one process), 1,000 executions of a
//    20-state Pass chain started over REST; each transition is a fenced commit with its
//    history, journal and chain hash.
//  - Bare BullMQ: one Worker (same concurrency, in this process) running 1,000 chains of
//    20 jobs, each job one MULTI with an HSET and an XADD (a state write and a history
//    write) and then adding the next job.
// It prints both rates (transitions or jobs per second) and their ratio.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { findExecutable } from "../cli/local-redis.js";

const ROOT = resolve(import.meta.dirname, "..");
const EXECUTIONS = Number(process.argv[2] ?? 1000);
const STATES = 20;
const CONCURRENCY = 64;

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => ok(port));
    });
    server.once("error", fail);
  });
}

async function waitFor(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 600_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A private redis-server: nothing on disk, stopped by its pid. */
async function freshRedis(): Promise<{ url: string; stop: () => void }> {
  const binary = findExecutable("redis-server", process.env.PATH);
  if (!binary) throw new Error("redis-server is not on PATH");
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "stepwise-bench-redis-"));
  const child = spawn(
    binary,
    ["--port", String(port), "--save", "", "--appendonly", "no", "--dir", dir],
    {
      stdio: "ignore",
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  const probe = quiet(new Redis(url, { lazyConnect: true, retryStrategy: () => 50 }));
  await waitFor(async () => (await probe.ping().catch(() => "")) === "PONG", "redis-server");
  probe.disconnect();
  return {
    url,
    stop: () => {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Redis stops when the bench ends: late reconnection attempts are not worth a stack trace. */
function quiet(redis: Redis): Redis {
  redis.on("error", () => {});
  return redis;
}

async function bareBullMQ(url: string): Promise<number> {
  const connection = quiet(new Redis(url, { maxRetriesPerRequest: null }));
  const workerConnection = quiet(new Redis(url, { maxRetriesPerRequest: null }));
  const writes = quiet(new Redis(url, { enableAutoPipelining: true }));
  const queue = new Queue("bare", { connection, prefix: "bare" });
  let done = 0;
  const worker = new Worker<{ chain: number; step: number }>(
    "bare",
    async (job) => {
      const { chain, step } = job.data;
      const event = JSON.stringify({ id: step + 1, type: "PassStateExited", at: Date.now() });
      await writes
        .multi()
        .hset(`bare:state:${chain}`, "s", JSON.stringify({ step }), "q", step + 1)
        .xadd(`bare:history:${chain}`, "*", "e", event)
        .exec();
      if (step + 1 < STATES) {
        await queue.add("s", { chain, step: step + 1 }, { jobId: `${chain}-${step + 1}` });
      }
      done++;
    },
    {
      connection: workerConnection,
      prefix: "bare",
      concurrency: CONCURRENCY,
      removeOnComplete: { count: 0 },
      drainDelay: 1,
    },
  );
  await worker.waitUntilReady();
  const t0 = performance.now();
  for (let i = 0; i < EXECUTIONS; i += 500) {
    await queue.addBulk(
      Array.from({ length: Math.min(500, EXECUTIONS - i) }, (_, k) => ({
        name: "s",
        data: { chain: i + k, step: 0 },
        opts: { jobId: `${i + k}-0` },
      })),
    );
  }
  await waitFor(() => done >= EXECUTIONS * STATES, "the bare chains");
  const seconds = (performance.now() - t0) / 1000;
  await worker.close();
  await queue.close();
  for (const c of [connection, workerConnection, writes]) c.disconnect();
  return (EXECUTIONS * STATES) / seconds;
}

async function stepwiseServe(url: string): Promise<number> {
  const port = await freePort();
  const prefix = "sw";
  // The sources, not dist/ (what `npx stepwise` runs is built at install).
  const script = `import { main } from ${JSON.stringify(join(ROOT, "cli/main.ts"))};
    const io = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };
    process.exitCode = await main(["serve", "--port", "${port}"], io);`;
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        REDIS_URL: url,
        STEPWISE_PREFIX: prefix,
        STEPWISE_CONCURRENCY: String(CONCURRENCY),
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const api = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      async () => (await fetch(`${api}/health`).catch(() => undefined))?.ok === true,
      "serve",
    );
    const States: Record<string, object> = {};
    for (let i = 0; i < STATES; i++)
      States[`S${i}`] =
        i + 1 < STATES ? { Type: "Pass", Next: `S${i + 1}` } : { Type: "Pass", End: true };
    const created = await fetch(`${api}/v1/state-machines`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "chain", definition: { StartAt: "S0", States } }),
    });
    if (!created.ok) throw new Error(`create: ${created.status} ${await created.text()}`);
    const sub = quiet(new Redis(url));
    let ended = 0;
    await sub.subscribe(`${prefix}:{sw}:ended`);
    sub.on("message", () => ended++);
    const t0 = performance.now();
    for (let i = 0; i < EXECUTIONS; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, EXECUTIONS - i) }, async (_, k) => {
          const res = await fetch(`${api}/v1/state-machines/chain/executions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: `e${i + k}`, input: { i: i + k } }),
          });
          if (!res.ok) throw new Error(`start: ${res.status} ${await res.text()}`);
        }),
      );
    }
    await waitFor(() => ended >= EXECUTIONS, "the executions");
    const seconds = (performance.now() - t0) / 1000;
    sub.disconnect();
    return (EXECUTIONS * STATES) / seconds;
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
}

const redis = await freshRedis();
try {
  const bare = await bareBullMQ(redis.url);
  const durable = await stepwiseServe(redis.url);
  console.log(`bare BullMQ chain (MULTI HSET + XADD per job): ${bare.toFixed(0)} jobs/s`);
  console.log(
    `stepwise serve over REST (fenced commit + history + journal + chain): ${durable.toFixed(0)} transitions/s`,
  );
  console.log(
    `ratio durable/bare: ${(durable / bare).toFixed(2)} (${EXECUTIONS} executions × ${STATES} states, concurrency ${CONCURRENCY}, one fresh Redis)`,
  );
} finally {
  redis.stop();
}
