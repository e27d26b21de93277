// Shared pieces of the Redis benches: worker processes, a runtime on a throwaway
// key prefix, and waiting for executions to end.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { request, type Agent } from "node:http";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { findExecutable } from "../cli/local-redis.js";
import { freePort } from "../scripts/free-port.js";
import { createRedisRuntime, type RedisRuntime } from "../runtime/runtime.js";

const ROOT = resolve(import.meta.dirname, "..");
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** `--<name> N` on the command line, a positive integer, else `fallback`. */
export function countOption(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const raw = i >= 0 ? process.argv[i + 1] : undefined;
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} needs a positive integer`);
  return value;
}

export function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Worker processes (bench/redis-worker.ts), as in production; resolves once each is ready. */
export function spawnWorkers(
  n: number,
  prefix: string,
  redisUrl = REDIS_URL,
): Promise<ChildProcess[]> {
  return Promise.all(
    Array.from({ length: n }, () => {
      const child = spawn(
        process.execPath,
        // BENCH_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the workers.
        [
          // The young generation the Docker image gives worker processes (Dockerfile).
          "--max-semi-space-size=64",
          ...(process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
          "--import",
          "tsx",
          join(ROOT, "bench/redis-worker.ts"),
        ],
        {
          cwd: ROOT,
          env: { ...process.env, REDIS_URL: redisUrl, STEPWISE_PREFIX: prefix },
          stdio: ["ignore", "pipe", "inherit"],
        },
      );
      return new Promise<ChildProcess>((ok) =>
        child.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && ok(child)),
      );
    }),
  );
}

export async function stopWorkers(workers: ChildProcess[]): Promise<void> {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((done) => {
          w.once("exit", () => done());
          w.kill("SIGTERM");
        }),
    ),
  );
}

/** Every key under `<prefix>:`, for the memory figures and the cleanup. */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 5000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== "0");
  return found;
}

async function cleanup(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  const keys = await scanKeys(redis, `${prefix}:*`);
  for (let i = 0; i < keys.length; i += 5000) await redis.unlink(...keys.slice(i, i + 5000));
  redis.disconnect();
}

/** Counts executions ending (the runtime publishes each end). */
export async function endCounter(
  redisUrl: string,
  runtime: RedisRuntime,
): Promise<{ count: () => number; close: () => void }> {
  const sub = new Redis(redisUrl);
  let n = 0;
  // One channel per shard (runtime/shards/shards.ts).
  await sub.subscribe(...(await runtime.shardLayout()).shards.map((k) => k.endedChannel));
  sub.on("message", () => (n += 1));
  return { count: () => n, close: () => sub.disconnect() };
}

export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 600_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A runtime on a fresh key prefix, whose keys are deleted afterwards. */
export async function withRuntime<T>(
  fn: (runtime: RedisRuntime, prefix: string) => Promise<T>,
  redisUrl = REDIS_URL,
): Promise<T> {
  const prefix = `bench-${randomBytes(4).toString("hex")}`;
  const runtime = createRedisRuntime({ redisUrl, prefix });
  try {
    return await fn(runtime, prefix);
  } finally {
    await runtime.close();
    await cleanup(redisUrl, prefix);
  }
}

/** Starts `n` executions, `batch` at a time. */
export async function startMany(
  runtime: RedisRuntime,
  machine: string,
  n: number,
  options: (i: number) => Parameters<RedisRuntime["startExecution"]>[1],
  batch = 500,
): Promise<void> {
  for (let i = 0; i < n; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, n - i) }, (_, j) =>
        runtime.startExecution(machine, options(i + j)),
      ),
    );
  }
}

/** POSTs JSON to 127.0.0.1:`port` over `agent` (keep-alive); the answer's status and text. */
export function postJson(
  agent: Agent,
  port: number,
  path: string,
  body: unknown,
): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((ok, fail) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => ok({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", fail);
    req.end(payload);
  });
}

/** User + system CPU of a process so far, ms (Linux /proc; ticks of 10 ms); NaN once it is gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** A private redis-server on a free port: nothing on disk, killed by its pid. */
export async function privateRedis(): Promise<{ url: string; pid: number; stop: () => void }> {
  const binary = findExecutable("redis-server", process.env.PATH);
  if (!binary) throw new Error("redis-server is not on PATH");
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "stepwise-bench-redis-"));
  const child = spawn(
    binary,
    ["--port", String(port), "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50 });
  probe.on("error", () => {});
  await until(async () => (await probe.ping().catch(() => "")) === "PONG", 30_000);
  probe.disconnect();
  return {
    url,
    pid: child.pid!,
    stop: () => {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
