// What executions cost at scale (issue 21). Run: npx tsx bench/costs.ts [timers|list|memory ...]
// (default: all). Env: BENCH_TIMERS (burst sizes, default 5000,20000,50000),
// BENCH_STORED (default 1000,10000,50000), BENCH_WORKERS (worker processes, default 2).
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import type { StateMachineDefinition } from "../engine/core/definition.js";
import type { RedisRuntime } from "../runtime/runtime.js";
import { EXECUTION_FIELDS, STATS_FIELDS } from "../runtime/store/fields.js";
import {
  endCounter,
  pct,
  REDIS_URL,
  scanKeys,
  spawnWorkers,
  startMany,
  stopWorkers,
  until,
  withRuntime,
} from "./harness.js";

const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const sizes = (name: string, fallback: number[]): number[] =>
  process.env[name]?.split(",").map(Number) ?? fallback;

const define = (runtime: RedisRuntime, name: string, def: object) =>
  runtime.createStateMachine(name, def as StateMachineDefinition);

/**
 * N executions wait on ONE instant (a Wait with `TimestampPath`). They are
 * started with a far timestamp; once every timer is armed, the bench moves all
 * of them to the same due time 2 s ahead (the schedule's score), so the burst is
 * exact whatever the start rate. Lateness = the execution's end (the Wait is its
 * last state: the fired timer's transition ends it) − the due time.
 */
async function timerBurst(n: number): Promise<void> {
  await withRuntime(async (runtime, prefix) => {
    await define(runtime, "nap", {
      StartAt: "W",
      States: { W: { Type: "Wait", TimestampPath: "$.at", End: true } },
    });
    const redis = new Redis(REDIS_URL);
    const procs = await spawnWorkers(WORKERS, prefix);
    const ended = await endCounter(REDIS_URL, runtime);
    const far = new Date(Date.now() + 86_400_000).toISOString();
    await startMany(runtime, "nap", n, (i) => ({ name: `b${i}`, input: { at: far } }));
    // Every shard has its own schedule and counts (runtime/shards/shards.ts).
    const shards = (await runtime.shardLayout()).shards;
    const armed = async (): Promise<number> =>
      (await Promise.all(shards.map((k) => redis.hget(k.stats, STATS_FIELDS.timers)))).reduce(
        (a, b) => a + Number(b),
        0,
      );
    await until(async () => (await armed()) >= n);
    const due = Date.now() + 2000;
    for (const keys of shards) {
      const members = (await redis.zrange(keys.schedule, "0", "-1")).filter((m) =>
        m.startsWith("t:"),
      );
      for (let i = 0; i < members.length; i += 5000) {
        const chunk = members.slice(i, i + 5000);
        await redis.zadd(keys.schedule, ...chunk.flatMap((m) => [String(due), m]));
      }
    }
    await until(() => Date.now() >= due, 5000);
    const cpu0 = await redisCpu(redis);
    const workerCpu0 = procs.map(processCpu);
    const stats0 = await commandStats(redis);
    await until(() => ended.count() >= n);
    const redisSeconds = (await redisCpu(redis)) - cpu0;
    const workerSeconds = procs.reduce((sum, p, i) => sum + processCpu(p) - workerCpu0[i]!, 0);
    if (process.env.BENCH_COMMANDSTATS) {
      const stats1 = await commandStats(redis);
      const spent = [...stats1]
        .map(([cmd, [calls, usec]]) => {
          const [calls0, usec0] = stats0.get(cmd) ?? [0, 0];
          return [cmd, (calls - calls0) / n, (usec - usec0) / n] as const;
        })
        .sort((a, b) => b[2] - a[2])
        .slice(0, 15);
      for (const [cmd, calls, usec] of spent)
        console.log(`  ${cmd}: ${calls.toFixed(2)} calls, ${usec.toFixed(1)} µs per timer`);
    }
    const ends: number[] = [];
    const layout = await runtime.shardLayout();
    for (let i = 0; i < n; i += 5000) {
      const pipe = redis.pipeline();
      for (let j = i; j < Math.min(n, i + 5000); j++)
        pipe.hget(layout.keysOf(`nap:b${j}`).execution(`nap:b${j}`), EXECUTION_FIELDS.stoppedAt);
      for (const [, t1] of (await pipe.exec()) ?? []) ends.push(Date.parse(String(t1)));
    }
    ends.sort((a, b) => a - b);
    if (process.env.BENCH_COMMANDSTATS) {
      const fifth = Math.floor(n / 5);
      const r = (k: number) =>
        ((fifth / Math.max(1, ends[(k + 1) * fifth - 1]! - ends[k * fifth]!)) * 1000).toFixed(0);
      console.log(
        `  fired per second, by fifth of the burst: ${[0, 1, 2, 3, 4].map(r).join(", ")}`,
      );
    }
    const late = ends.map((t) => t - due);
    // Fire rate in the burst's first and second halves: flat if the rate holds.
    const half = Math.floor(n / 2);
    const rate = (from: number, to: number) =>
      ((to - from) / Math.max(1, ends[to - 1]! - ends[from]!)) * 1000;
    console.log(
      `timer burst, ${n} timers due at once (${WORKERS} worker process(es)): lateness p50 ${pct(late, 50)} ms, p99 ${pct(late, 99)} ms, max ${pct(late, 100)} ms; fired ${rate(0, half).toFixed(0)}/s in the first half, ${rate(half, n).toFixed(0)}/s in the second; Redis CPU ${((redisSeconds / n) * 1e6).toFixed(0)} µs per timer, workers' CPU ${((workerSeconds / n) * 1e6).toFixed(0)} µs per timer`,
    );
    ended.close();
    await stopWorkers(procs);
    redis.disconnect();
  });
}

/**
 * Seconds of CPU a worker process has used (Linux /proc, in clock ticks of 10 ms):
 * on a shared machine CPU per timer varies less than the rate.
 */
function processCpu(child: ChildProcess): number {
  try {
    const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Seconds of CPU the Redis server has used (INFO cpu). */
async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return field("used_cpu_sys") + field("used_cpu_user");
}

/** Calls and µs per command (INFO commandstats; commands a script runs count too). */
async function commandStats(redis: Redis): Promise<Map<string, [number, number]>> {
  const stats = new Map<string, [number, number]>();
  for (const m of (await redis.info("commandstats")).matchAll(
    /cmdstat_(\S+?):calls=(\d+),usec=(\d+)/g,
  ))
    stats.set(m[1]!, [Number(m[2]), Number(m[3])]);
  return stats;
}

/**
 * A rare-status page: one RUNNING execution (the oldest) among N ended ones;
 * `listExecutions({status: RUNNING, limit: 1})` must not wade through the N.
 */
async function rarePage(stored: number[]): Promise<void> {
  await withRuntime(async (runtime, prefix) => {
    await define(runtime, "hold", {
      StartAt: "W",
      States: { W: { Type: "Wait", Seconds: 3600, End: true } },
    });
    await define(runtime, "quick", {
      StartAt: "P",
      States: { P: { Type: "Pass", End: true } },
    });
    const procs = await spawnWorkers(WORKERS, prefix);
    const ended = await endCounter(REDIS_URL, runtime);
    await runtime.startExecution("hold", { name: "rare" });
    let have = 0;
    for (const n of stored) {
      await startMany(runtime, "quick", n - have, (i) => ({ name: `q${have + i}` }));
      have = n;
      await until(() => ended.count() >= n);
      const times: number[] = [];
      for (let k = 0; k < 7; k++) {
        const t0 = performance.now();
        const page = await runtime.listExecutions({ status: "RUNNING", limit: 1 });
        times.push(performance.now() - t0);
        if (page.items.length !== 1) throw new Error("the RUNNING execution was not listed");
      }
      console.log(
        `rare-status page (status=RUNNING&limit=1) among ${n} ended executions: median ${pct(times, 50).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms (7 calls)`,
      );
    }
    ended.close();
    await stopWorkers(procs);
  });
}

/**
 * Redis bytes an ended execution keeps: MEMORY USAGE summed over every key that
 * names it (record, history, journal, runs and inboxes, its children's, join
 * hashes), for inputs of 1 KB, 50 KB and 200 KB. The machine passes its input
 * through a Pass and a 10-item Map, the common shape of a fan-out.
 */
async function bytesPerExecution(): Promise<void> {
  await withRuntime(async (runtime, prefix) => {
    await define(runtime, "mem", {
      StartAt: "Tag",
      States: {
        Tag: { Type: "Pass", Result: "t", ResultPath: "$.tag", Next: "Fan" },
        Fan: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemProcessor: {
            StartAt: "One",
            States: { One: { Type: "Pass", End: true } },
          },
          ResultPath: "$.fanned",
          End: true,
        },
      },
    });
    const redis = new Redis(REDIS_URL);
    const procs = await spawnWorkers(1, prefix);
    const ended = await endCounter(REDIS_URL, runtime);
    const layout = await runtime.shardLayout();
    for (const kb of [1, 50, 200]) {
      const runs = 5;
      const before = ended.count();
      const blob = "x".repeat(kb * 1024);
      const items = Array.from({ length: 10 }, (_, i) => i);
      await startMany(runtime, "mem", runs, (i) => ({
        name: `m${kb}-${i}`,
        input: { blob, items },
      }));
      await until(() => ended.count() >= before + runs);
      const totals: number[] = [];
      const byKind = new Map<string, number>();
      for (let i = 0; i < runs; i++) {
        const name = `mem:m${kb}-${i}`;
        const base = layout.keysOf(name).base;
        const keys = (await scanKeys(redis, `${base}*${name}*`)).filter(
          (k) => k.endsWith(`:${name}`) || k.includes(`:${name}/`),
        );
        let sum = 0;
        for (const key of keys) {
          const bytes = Number((await redis.call("MEMORY", "USAGE", key)) ?? 0);
          sum += bytes;
          const kind = key.slice(base.length).split(":")[0]!;
          byKind.set(kind, (byKind.get(kind) ?? 0) + bytes / runs);
        }
        totals.push(sum);
      }
      const parts = [...byKind].map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", ");
      console.log(
        `bytes per ended execution, ${kb} KB input: ${pct(totals, 50)} (median of ${runs}; by key kind: ${parts})`,
      );
    }
    ended.close();
    await stopWorkers(procs);
    redis.disconnect();
  });
}

const wanted = new Set(process.argv.slice(2));
const all = wanted.size === 0;
if (all || wanted.has("list")) await rarePage(sizes("BENCH_STORED", [1000, 10_000, 50_000]));
if (all || wanted.has("memory")) await bytesPerExecution();
if (all || wanted.has("timers"))
  for (const n of sizes("BENCH_TIMERS", [5000, 20_000, 50_000])) await timerBurst(n);
process.exit(0);
