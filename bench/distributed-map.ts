// A Distributed Map Run over a JSONL object in an S3-protocol server (s3rver, on a
// loopback port, file-backed in a temporary folder), through one `stepwise serve`
// (API and worker in one process) from the sources: items read by the ItemReader
// (streamed line by line), one Pass per item, results written by the ResultWriter
// (COMPACT) back to the bucket.
//
// Run: npx tsx bench/distributed-map.ts [items=100000] [concurrency=0] [type=STANDARD|EXPRESS]
// (`type`: the ItemProcessor's ExecutionType; EXPRESS items run in the worker, in
// memory, in chunks, without histories of their own.)
// It prints the time from the start to the end, items per second, serve's peak RSS
// (VmHWM) and Redis `used_memory` before, at its peak (sampled every 250 ms) and
// after; the CPU serve and Redis spent, serve's write syscalls and Redis's commands per
// item (less noisy than the time on a busy machine; BENCH_NODE_ARGS profiles serve);
// then the same items through an inline Map (items in the input), for comparison on
// the same machine at the same moment. Uses REDIS_URL (default 127.0.0.1:6379) under a
// random key prefix, deleted afterwards.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "../scripts/free-port.js";
import { startS3Server } from "../test/e2e/distributed-map-s3.js";
import { deleteKeys } from "../test/integration/helpers.js";
import { REDIS_URL } from "./harness.js";

const ROOT = resolve(import.meta.dirname, "..");

function arg(name: string, fallback: number): number {
  const found = process.argv.slice(2).find((a) => a.startsWith(`${name}=`));
  return found ? Number(found.slice(name.length + 1)) : fallback;
}
const ITEMS = arg("items", 100_000);
const CONCURRENCY = arg("concurrency", 0);
const TYPE =
  process.argv
    .slice(2)
    .find((a) => a.startsWith("type="))
    ?.slice("type=".length) ?? "STANDARD";
if (TYPE !== "STANDARD" && TYPE !== "EXPRESS") throw new Error(`type=${TYPE}: STANDARD or EXPRESS`);

const s3 = await startS3Server();
await s3.createBucket("bench");
const lines: string[] = [];
for (let i = 0; i < ITEMS; i++) lines.push(JSON.stringify({ id: i, name: `item-${i}` }));
await s3.put("bench", "items.jsonl", lines.join("\n") + "\n");
lines.length = 0;

const prefix = `bench-dmap-${randomBytes(4).toString("hex")}`;
const port = await freePort();
const api = `http://127.0.0.1:${port}`;
const script = `import { main } from ${JSON.stringify(join(ROOT, "cli/main.ts"))};
  const io = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };
  process.exitCode = await main(["serve"], io);`;
// BENCH_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile serve (bench/harness.ts).
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
const serve = spawn(
  process.execPath,
  [...nodeArgs, "--import", "tsx", "--input-type=module", "-e", script],
  {
    cwd: ROOT,
    env: {
      ...process.env,
      ...s3.env,
      REDIS_URL,
      PORT: String(port),
      STEPWISE_PREFIX: prefix,
      LOG_LEVEL: "warn",
      // Every iteration writes history events: more than AWS's 25,000 per execution.
      STEPWISE_MAX_HISTORY_EVENTS: "0",
    },
    stdio: ["ignore", "ignore", "pipe"],
  },
);
let serveErrors = "";
serve.stderr!.on("data", (c: Buffer) => (serveErrors += c.toString()));

const redis = new Redis(REDIS_URL);
const usedMemory = async (): Promise<number> =>
  Number(/used_memory:(\d+)/.exec(await redis.info("memory"))![1]);
const peakRss = (): number => {
  const status = readFileSync(`/proc/${serve.pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
};
// CPU seconds (user + system) so far: serve's from /proc, Redis's from INFO (the whole
// server's: on a shared Redis it counts other clients too). Less noisy than wall time
// on a busy machine, and what bounds the throughput on 2 cores.
const serveCpu = (): number => {
  const fields = readFileSync(`/proc/${serve.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
// Write system calls (sockets included) serve made so far: each is a syscall and, on a
// socket to Redis, a wake-up of Redis, whatever the load of the machine.
const serveWrites = (): number =>
  Number(/syscw: (\d+)/.exec(readFileSync(`/proc/${serve.pid}/io`, "utf8"))![1]);
// Commands Redis ran so far (INFO commandstats: a script's EVALSHA and each command it
// calls), and of them the EVALSHAs (one carries up to 64 script calls: store/redis.ts).
const redisCalls = async (): Promise<{ all: number; evalsha: number }> => {
  let all = 0;
  let evalsha = 0;
  for (const m of (await redis.info("commandstats")).matchAll(/cmdstat_(\w+):calls=(\d+)/g)) {
    all += Number(m[2]);
    if (m[1] === "evalsha") evalsha += Number(m[2]);
  }
  return { all, evalsha };
};
const redisCpu = async (): Promise<number> => {
  const info = await redis.info("cpu");
  return (
    Number(/used_cpu_sys:([\d.]+)/.exec(info)![1]) + Number(/used_cpu_user:([\d.]+)/.exec(info)![1])
  );
};
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 3_600_000;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

try {
  await waitFor(async () => ((await fetch(`${api}/health`)).ok ? true : undefined), "serve");
  const definition = {
    StartAt: "Process",
    States: {
      Process: {
        Type: "Map",
        MaxConcurrency: CONCURRENCY,
        ItemReader: {
          Resource: "arn:aws:states:::s3:getObject",
          ReaderConfig: { InputType: "JSONL" },
          Parameters: { Bucket: "bench", Key: "items.jsonl" },
        },
        ItemProcessor: {
          ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: TYPE },
          StartAt: "P",
          States: { P: { Type: "Pass", End: true } },
        },
        ResultWriter: {
          Resource: "arn:aws:states:::s3:putObject",
          Parameters: { Bucket: "bench", Prefix: "out" },
          WriterConfig: { Transformation: "COMPACT" },
        },
        End: true,
      },
    },
  };
  const created = await fetch(`${api}/v1/state-machines`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "dmap", definition }),
  });
  if (created.status !== 201) throw new Error(`create: ${await created.text()}`);
  const before = await usedMemory();
  const cpuBefore = {
    serve: serveCpu(),
    redis: await redisCpu(),
    writes: serveWrites(),
    calls: await redisCalls(),
  };
  let peak = before;
  const sampler = setInterval(() => {
    usedMemory()
      .then((m) => (peak = Math.max(peak, m)))
      .catch(() => {});
  }, 250);
  const t0 = performance.now();
  const started = (await (
    await fetch(`${api}/v1/state-machines/dmap/executions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: {} }),
    })
  ).json()) as { executionId: string };
  // Polled through AWS's DescribeExecution: the record alone. The REST describe also walks
  // the running children for pendingTasks (up to 1,000 run hashes a call): every 250 ms,
  // that was an eighth of Redis's commands and 3% of serve's CPU in a 10,000-item run.
  const record = await waitFor(async () => {
    const r = (await (
      await fetch(api, {
        method: "POST",
        headers: {
          "content-type": "application/x-amz-json-1.0",
          "x-amz-target": "AWSStepFunctions.DescribeExecution",
        },
        body: JSON.stringify({ executionArn: started.executionId }),
      })
    ).json()) as { status: string };
    return r.status === "RUNNING" ? undefined : r;
  }, "the execution");
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  const after = await usedMemory();
  const perItem = (s: number): string => `${((s * 1000) / ITEMS).toFixed(2)} ms/item`;
  const cpu = {
    serve: serveCpu() - cpuBefore.serve,
    redis: (await redisCpu()) - cpuBefore.redis,
    writes: serveWrites() - cpuBefore.writes,
  };
  const calls = await redisCalls();
  console.log(
    `Distributed Map of ${ITEMS.toLocaleString("en")} JSONL items (${TYPE}, MaxConcurrency ${CONCURRENCY}): ` +
      `${record.status} in ${seconds.toFixed(1)} s, ${(ITEMS / seconds).toFixed(0)} items/s; ` +
      `serve peak RSS ${mb(peakRss())}; Redis used_memory ${mb(before)} before, ${mb(peak)} peak, ${mb(after)} after; ` +
      `CPU: serve ${cpu.serve.toFixed(1)} s (${perItem(cpu.serve)}), Redis ${cpu.redis.toFixed(1)} s (${perItem(cpu.redis)}); ` +
      `serve write syscalls ${(cpu.writes / ITEMS).toFixed(1)}/item; Redis commands ` +
      `${((calls.all - cpuBefore.calls.all) / ITEMS).toFixed(1)}/item (EVALSHA ` +
      `${((calls.evalsha - cpuBefore.calls.evalsha) / ITEMS).toFixed(2)}/item; the whole server's)`,
  );
  if (record.status !== "SUCCEEDED") console.log(JSON.stringify(record).slice(0, 2000));

  // The same items through today's inline Map, in the same service at the same moment:
  // the items in the input, no S3 on either side.
  const inline = {
    StartAt: "Process",
    States: {
      Process: {
        Type: "Map",
        MaxConcurrency: CONCURRENCY,
        ItemProcessor: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
        End: true,
      },
    },
  };
  await fetch(`${api}/v1/state-machines`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "inline", definition: inline }),
  });
  const items = Array.from({ length: ITEMS }, (_, i) => ({ id: i, name: `item-${i}` }));
  const t1 = performance.now();
  const startedInline = await fetch(`${api}/v1/state-machines/inline/executions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ input: items }),
  });
  if (startedInline.status !== 201) {
    // An inline Map's items are its input: past the input limit (256 KiB) it cannot start.
    console.log(`Inline Map of the same items: not started: ${await startedInline.text()}`);
  } else {
    const second = (await startedInline.json()) as { executionId: string };
    const inlineRecord = await waitFor(async () => {
      const r = (await (
        await fetch(`${api}/v1/executions/${encodeURIComponent(second.executionId)}`)
      ).json()) as { status: string };
      return r.status === "RUNNING" ? undefined : r;
    }, "the inline Map");
    const inlineSeconds = (performance.now() - t1) / 1000;
    console.log(
      `Inline Map of the same ${ITEMS.toLocaleString("en")} items from the input: ${inlineRecord.status} in ` +
        `${inlineSeconds.toFixed(1)} s, ${(ITEMS / inlineSeconds).toFixed(0)} items/s`,
    );
  }
} finally {
  serve.kill("SIGTERM");
  await new Promise((r) => serve.once("exit", r));
  redis.disconnect();
  await deleteKeys(REDIS_URL, prefix);
  await s3.close();
  if (serveErrors.trim()) console.error(serveErrors.slice(0, 4000));
}
