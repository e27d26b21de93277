// A durable transition against a bare queue hop, side by side on one fresh Redis (issue 19).
// Run: npx tsx bench/throughput-vs-bullmq.ts [executions=1000]
//
//  - Stepwise: `stepwise serve` (API and worker in one process), 1,000 executions of a
//    20-state Pass chain started over REST; each transition is a fenced commit with its
//    history, journal and chain hash.
//  - Bare BullMQ: one Worker (same concurrency, in this process) running 1,000 chains of
//    20 jobs, each job one MULTI with an HSET and an XADD (a state write and a history
//    write) and then adding the next job.
// It prints both rates (transitions or jobs per second) and their ratio; then the same
// Stepwise run with 1, 2 and 4 shards on one Redis (STEPWISE_SHARDS, a fresh Redis each),
// and with 16 shards on a local 3-master Redis Cluster served by 2 worker processes
// (`serve` and one `stepwise worker`), skipped where redis-server cannot make a cluster.
import { spawn, type ChildProcess } from "node:child_process";
import { freePort } from "../scripts/free-port.js";
import { join, resolve } from "node:path";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { canStartCluster, startCluster } from "../scripts/redis-cluster.js";
import { privateRedis } from "./harness.js";

const ROOT = resolve(import.meta.dirname, "..");
const EXECUTIONS = Number(process.argv[2] ?? 1000);
const STATES = 20;
const CONCURRENCY = 64;

async function waitFor(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 600_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
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

interface Target {
  url: string;
  cluster?: string[];
  shards: number;
  /** `stepwise worker` processes beside serve's own worker. */
  extraWorkers?: number;
}

async function stepwiseServe(target: Target): Promise<number> {
  const { url } = target;
  const port = await freePort();
  const prefix = "sw";
  const env = {
    ...process.env,
    REDIS_URL: url,
    STEPWISE_PREFIX: prefix,
    STEPWISE_CONCURRENCY: String(CONCURRENCY),
    STEPWISE_SHARDS: String(target.shards),
    ...(target.cluster ? { STEPWISE_REDIS_CLUSTER: target.cluster.join(",") } : {}),
    LOG_LEVEL: "warn",
  };
  // The sources, not dist/ (what `npx stepwise` runs is built at install).
  const script = `import { main } from ${JSON.stringify(join(ROOT, "cli/main.ts"))};
    const io = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };
    process.exitCode = await main(["serve", "--port", "${port}"], io);`;
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    { cwd: ROOT, env, stdio: ["ignore", "ignore", "inherit"] },
  );
  const workers: ChildProcess[] = [];
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
    for (let i = 0; i < (target.extraWorkers ?? 0); i++) {
      const worker = `import { main } from ${JSON.stringify(join(ROOT, "cli/main.ts"))};
        const io = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };
        process.exitCode = await main(["worker"], io);`;
      workers.push(
        spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", worker], {
          cwd: ROOT,
          env,
          stdio: ["ignore", "ignore", "inherit"],
        }),
      );
    }
    // Every shard publishes its ends on its own channel (`<prefix>:{sw}:ended` with one
    // shard, `<prefix>:{sw:<i>}:ended` with several); a cluster broadcasts them all.
    const sub = quiet(target.cluster ? new Redis(`redis://${target.cluster[0]}`) : new Redis(url));
    let ended = 0;
    await sub.psubscribe(`${prefix}:{sw*}:ended`);
    sub.on("pmessage", () => ended++);
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
    for (const proc of [child, ...workers]) proc.kill("SIGTERM");
    await Promise.all([child, ...workers].map((proc) => new Promise((r) => proc.once("exit", r))));
  }
}

const redis = await privateRedis();
try {
  const bare = await bareBullMQ(redis.url);
  const durable = await stepwiseServe({ url: redis.url, shards: 1 });
  console.log(`bare BullMQ chain (MULTI HSET + XADD per job): ${bare.toFixed(0)} jobs/s`);
  console.log(
    `stepwise serve over REST (fenced commit + history + journal + chain): ${durable.toFixed(0)} transitions/s`,
  );
  console.log(
    `ratio durable/bare: ${(durable / bare).toFixed(2)} (${EXECUTIONS} executions × ${STATES} states, concurrency ${CONCURRENCY}, one fresh Redis, 1 shard)`,
  );
} finally {
  redis.stop();
}

for (const shards of [1, 2, 4]) {
  const own = await privateRedis();
  try {
    const rate = await stepwiseServe({ url: own.url, shards });
    console.log(
      `${shards} shard${shards === 1 ? "" : "s"} on one Redis: ${rate.toFixed(0)} transitions/s`,
    );
  } finally {
    own.stop();
  }
}

if (canStartCluster()) {
  const cluster = await startCluster(3);
  try {
    const rate = await stepwiseServe({
      url: `redis://${cluster.nodes[0]}`,
      cluster: cluster.nodes,
      shards: 16,
      extraWorkers: 1,
    });
    console.log(
      `16 shards on a 3-master Redis Cluster, 2 workers: ${rate.toFixed(0)} transitions/s`,
    );
  } finally {
    await cluster.stop();
  }
} else {
  console.log("3-master cluster: skipped (redis-server 5 or later needed)");
}
