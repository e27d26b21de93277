// Benchmarks of the Redis runtime. Run: npx tsx bench/redis-bench.ts [throughput|lone|map|latency|timers|memory ...]
// (default: all). Workers are separate processes (bench/redis-worker.ts), as in production.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { freePort } from "../scripts/free-port.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { StateMachineDefinition } from "../engine/core/definition.js";
import { STATS_FIELDS } from "../runtime/store/fields.js";
import { createRedisRuntime, type RedisRuntime } from "../runtime/runtime.js";
import { pct, REDIS_URL, spawnWorkers, stopWorkers } from "./harness.js";

const CHAIN = 20;

function chain(n: number): StateMachineDefinition {
  const States: Record<string, object> = {};
  for (let i = 0; i < n; i++)
    States[`S${i}`] = i + 1 < n ? { Type: "Pass", Next: `S${i + 1}` } : { Type: "Pass", End: true };
  return { StartAt: "S0", States } as StateMachineDefinition;
}

async function cleanup(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 5000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== "0");
  redis.disconnect();
}

/** Counts executions ending (the runtime publishes each end). */
async function endCounter(
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

async function until(check: () => boolean, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function withRuntime<T>(
  fn: (runtime: RedisRuntime, prefix: string) => Promise<T>,
  redisUrl = REDIS_URL,
  prefix = `bench-${randomBytes(4).toString("hex")}`,
): Promise<T> {
  const runtime = createRedisRuntime({ redisUrl, prefix });
  try {
    return await fn(runtime, prefix);
  } finally {
    await runtime.close();
    await cleanup(redisUrl, prefix);
  }
}

/** 1,000 concurrent executions of a 20-state chain: transitions per second. */
async function throughput(workers: number): Promise<number> {
  return withRuntime(async (runtime, prefix) => {
    await runtime.createStateMachine("chain", chain(CHAIN));
    const procs = await spawnWorkers(workers, prefix);
    const ended = await endCounter(REDIS_URL, runtime);
    const N = 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: N }, (_, i) => runtime.startExecution("chain", { name: `c${i}` })),
    );
    await until(() => ended.count() >= N);
    const seconds = (performance.now() - t0) / 1000;
    ended.close();
    await stopWorkers(procs);
    const rate = (N * (CHAIN + 1)) / seconds;
    console.log(
      `throughput, ${workers} worker process(es): ${rate.toFixed(0)} transitions/s (${N} executions × ${CHAIN + 1} transitions in ${seconds.toFixed(2)} s)`,
    );
    return rate;
  });
}

/**
 * One Map over N items (a one-Pass processor), one worker process: items per
 * second. Every child's end is a transition of the parent; it costs the same
 * for any N (the outputs wait in the join's hash, the parent's state keeps
 * counters and its large input apart), so items per second should not fall as
 * N grows.
 */
async function mapFanOut(): Promise<void> {
  await withRuntime(async (runtime, prefix) => {
    const fan = (maxConcurrency: number) =>
      ({
        StartAt: "Fan",
        States: {
          Fan: {
            Type: "Map",
            MaxConcurrency: maxConcurrency,
            ItemProcessor: {
              StartAt: "One",
              States: { One: { Type: "Pass", Result: { ok: true }, End: true } },
            },
            End: true,
          },
        },
      }) as StateMachineDefinition;
    await runtime.createStateMachine("fan", fan(0));
    await runtime.createStateMachine("window", fan(10));
    const procs = await spawnWorkers(1, prefix);
    const ended = await endCounter(REDIS_URL, runtime);
    // Up to 40,000 items: about what 256 KiB of input holds (issue 20: flat, no crash).
    const sizes = { fan: [1_000, 4_000, 16_000, 40_000], window: [500, 4_000] };
    for (const machine of ["fan", "window"] as const) {
      const figures: string[] = [];
      for (const n of sizes[machine]) {
        const before = ended.count();
        const t0 = performance.now();
        await runtime.startExecution(machine, { input: Array.from({ length: n }, (_, i) => i) });
        await until(() => ended.count() > before);
        const seconds = (performance.now() - t0) / 1000;
        figures.push(`${n} items in ${seconds.toFixed(2)} s (${(n / seconds).toFixed(0)} items/s)`);
      }
      const label = machine === "fan" ? "map fan-out" : "map fan-out, MaxConcurrency 10";
      console.log(`${label}, 1 worker: ${figures.join("; ")}`);
    }
    ended.close();
    await stopWorkers(procs);
  });
}

/**
 * One execution alone: how fast one run advances. A worker runs for days, so the
 * figure is its steady state: five executions warm it up (V8 optimises the hot
 * path after a few thousand calls), then the median of five is reported, with
 * the first, cold one next to it.
 */
async function lone(): Promise<void> {
  await withRuntime(async (runtime, prefix) => {
    await runtime.createStateMachine("chain", chain(200));
    const procs = await spawnWorkers(1, prefix);
    const ended = await endCounter(REDIS_URL, runtime);
    const rates: number[] = [];
    for (let i = 0; i < 10; i++) {
      const before = ended.count();
      const t0 = performance.now();
      await runtime.startExecution("chain", { name: `lone${i}` });
      await until(() => ended.count() > before);
      rates.push(201 / ((performance.now() - t0) / 1000));
    }
    ended.close();
    await stopWorkers(procs);
    console.log(
      `lone execution: ${pct(rates.slice(5), 50).toFixed(0)} transitions/s (median of 5 after 5 to warm up; the first, cold: ${rates[0]!.toFixed(0)}/s)`,
    );
  });
}

/**
 * Transition latency at half the measured load: executions are started at a
 * steady rate; a transition's latency is the time between the commit that
 * queued its event and its own processing (successive event timestamps of a chain).
 */
async function latency(rate: number): Promise<void> {
  await withRuntime(async (runtime, prefix) => {
    await runtime.createStateMachine("chain", chain(CHAIN));
    const procs = await spawnWorkers(1, prefix);
    const ended = await endCounter(REDIS_URL, runtime);
    const perSecond = rate / 2 / (CHAIN + 1);
    const total = Math.round(perSecond * 8);
    const t0 = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < total; i++) {
      const due = t0 + (i / perSecond) * 1000;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      void runtime.startExecution("chain", { name: `l${i}` }).then((r) => ids.push(r.executionId));
    }
    await until(() => ended.count() >= total);
    const gaps: number[] = [];
    for (const id of ids.slice(Math.floor(ids.length / 4))) {
      const { items } = await runtime.getHistory(id, { limit: 1000 });
      const entered = items
        .filter((e) => e.type === "PassStateEntered")
        .map((e) => Date.parse(e.timestamp));
      for (let i = 1; i < entered.length; i++) gaps.push(entered[i]! - entered[i - 1]!);
    }
    ended.close();
    await stopWorkers(procs);
    console.log(
      `transition latency at ${(rate / 2).toFixed(0)} transitions/s (half load, 1 worker): p50 ${pct(gaps, 50)} ms, p99 ${pct(gaps, 99)} ms (${gaps.length} transitions)`,
    );
  });
}

/** 1,000 timers armed per second (Wait 2 s), lateness = exit time − due time. */
async function timers(): Promise<void> {
  await withRuntime(async (runtime, prefix) => {
    await runtime.createStateMachine("nap", {
      StartAt: "W",
      States: { W: { Type: "Wait", Seconds: 2, End: true } },
    } as StateMachineDefinition);
    const procs = await spawnWorkers(1, prefix);
    const ended = await endCounter(REDIS_URL, runtime);
    const total = 5000;
    const t0 = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < total; i += 50) {
      const due = t0 + i; // 1,000 per second, in batches of 50 every 50 ms
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      for (let j = i; j < i + 50; j++)
        void runtime.startExecution("nap", { name: `w${j}` }).then((r) => ids.push(r.executionId));
    }
    await until(() => ended.count() >= total);
    const late: number[] = [];
    for (const id of ids) {
      const { items } = await runtime.getHistory(id, { limit: 10 });
      const entered = items.find((e) => e.type === "WaitStateEntered");
      const exited = items.find((e) => e.type === "WaitStateExited");
      if (entered && exited)
        late.push(Date.parse(exited.timestamp) - (Date.parse(entered.timestamp) + 2000));
    }
    ended.close();
    await stopWorkers(procs);
    console.log(
      `timer lateness, 1,000 timers armed/s (${late.length} timers, 1 worker): p50 ${pct(late, 50)} ms, p99 ${pct(late, 99)} ms, max ${pct(late, 100)} ms`,
    );
  });
}

/**
 * Redis bytes per execution parked on a task token (own redis-server, so nothing
 * else counts). The keys carry the default prefix, `stepwise`, as a deployment's
 * do: the figure moves with the prefix's length (the random `bench-<8 hex>` the
 * other benches use costs about 65 B more per execution, through four key names
 * and jemalloc's size classes) and with the execution names' (`p<i>` here).
 */
async function memory(): Promise<void> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "stepwise-bench-"));
  const server = spawn(
    "redis-server",
    ["--port", String(port), "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  await new Promise((r) => setTimeout(r, 300));
  try {
    await withRuntime(
      async (runtime, prefix) => {
        // BENCH_PARK=wait: parked on a one-day Wait instead (a timer, no task).
        const onWait = process.env.BENCH_PARK === "wait";
        await runtime.createStateMachine(
          "park",
          (onWait
            ? { StartAt: "Later", States: { Later: { Type: "Wait", Seconds: 86_400, End: true } } }
            : {
                StartAt: "Approve",
                States: {
                  Approve: {
                    Type: "Task",
                    Resource: "arn:aws:states:::stepwise:waitForTaskToken",
                    Parameters: { "token.$": "$$.Task.Token", "order.$": "$.order" },
                    End: true,
                  },
                },
              }) as StateMachineDefinition,
        );
        const redis = new Redis(url);
        const used = async (): Promise<number> =>
          Number(/used_memory:(\d+)/.exec(await redis.info("memory"))![1]);
        const procs = await spawnWorkers(1, prefix, url);
        // Warm up (queues, scripts, first keys) before the baseline.
        await runtime.startExecution("park", { name: "warm", input: { order: "warm" } });
        await new Promise((r) => setTimeout(r, 500));
        const before = await used();
        // BENCH_PARKED=1000000 measures the issue's million instead of extrapolating.
        const N = Number(process.env.BENCH_PARKED ?? 10_000);
        // BENCH_NAMES=generated: the names a start without one gets (20 characters), not p<i>.
        const generated = process.env.BENCH_NAMES === "generated";
        const t0 = performance.now();
        let first = "park:p1";
        for (let i = 0; i < N; i += 500) {
          const started = await Promise.all(
            Array.from({ length: 500 }, (_, j) =>
              runtime.startExecution("park", {
                ...(generated ? {} : { name: `p${i + j}` }),
                input: { order: `o-${i + j}` },
              }),
            ),
          );
          if (generated && i === 0) first = started[1]!.executionId.split(":execution:")[1]!;
        }
        // Parked = every execution wrote its TaskScheduled (history count 3).
        const layout = await runtime.shardLayout();
        const sum = async (read: (k: (typeof layout.shards)[number]) => Promise<number>) =>
          (await Promise.all(layout.shards.map(read))).reduce((a, b) => a + b, 0);
        for (;;) {
          if (onWait) {
            // Parked = its timer armed and its start's lease dropped: one schedule entry each, all timers.
            const timers = await sum(async (k) =>
              Number((await redis.hget(k.stats, STATS_FIELDS.timers)) ?? 0),
            );
            const sched = await sum((k) => redis.zcard(k.schedule));
            if (timers >= N + 1 && sched === timers) break;
          } else {
            const sched = await sum((k) => redis.zcard(k.schedule));
            const tokens = await sum((k) => redis.hlen(k.tokens));
            if (tokens >= N + 1 && sched === 0) break;
          }
          await new Promise((r) => setTimeout(r, N > 100_000 ? 2000 : 200));
        }
        const parkedIn = (performance.now() - t0) / 1000;
        const after = await used();
        await stopWorkers(procs);
        const perExec = (after - before) / N;
        const one = layout.keysOf(first);
        const keys = [
          one.execution(first),
          one.run(first),
          one.history(first),
          one.journal(first),
          one.inbox(first),
          one.payloads(first),
          one.parked(first),
        ];
        const sizes = await Promise.all(
          keys.map(
            async (k) =>
              [
                k.slice(one.base.length).split(":")[0],
                Number((await redis.call("MEMORY", "USAGE", k)) ?? 0),
              ] as const,
          ),
        );
        console.log(
          `memory: ${perExec.toFixed(0)} bytes per execution parked on ${onWait ? "a one-day Wait" : "a task token"} (${N} parked, key prefix ${prefix}, ${generated ? "generated names" : "names p<i>"}; INFO used_memory delta); ${((perExec * 1_000_000) / 1e9).toFixed(2)} GB per million; parked in ${parkedIn.toFixed(0)} s`,
        );
        console.log(
          `  MEMORY USAGE of one parked execution's keys: ${sizes.map(([k, v]) => `${k} ${v}`).join(", ")} (+ its entries in the shared ${onWait ? "schedule and status indexes" : "tasks/tokens hashes"})`,
        );
        const anchor = await parkedAnchor(url, N, used);
        console.log(
          `  anchor, same Redis: ${anchor.toFixed(0)} bytes per job parked a day (a BullMQ delayed job, an HSET record and a one-event history list); Stepwise ${(perExec / anchor).toFixed(2)}×`,
        );
        redis.disconnect();
      },
      url,
      "stepwise",
    );
  } finally {
    server.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The anchor of the parked-bytes figure (issue 43): the least a queue keeps for a job
 * parked a day with a record and a history: a BullMQ delayed job, an HSET record of
 * the fields a status page shows and a one-event history list, `n` of each.
 */
async function parkedAnchor(url: string, n: number, used: () => Promise<number>): Promise<number> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue("anchor", { connection, prefix: "anchor" });
  const before = await used();
  const at = new Date().toISOString();
  for (let i = 0; i < n; i += 500) {
    const ids = Array.from({ length: Math.min(500, n - i) }, (_, j) => i + j);
    await queue.addBulk(
      ids.map((k) => ({
        name: "park",
        data: { order: `o-${k}` },
        opts: { delay: 86_400_000, jobId: `a${k}` },
      })),
    );
    const multi = connection.multi();
    for (const k of ids) {
      const input = JSON.stringify({ order: `o-${k}` });
      multi.hset(
        `anchor:x:${k}`,
        "status",
        "RUNNING",
        "machine",
        "park",
        "input",
        input,
        "startedAt",
        at,
      );
      multi.rpush(
        `anchor:h:${k}`,
        JSON.stringify({ id: 1, type: "ExecutionStarted", timestamp: at, input }),
      );
    }
    await multi.exec();
  }
  const bytes = ((await used()) - before) / n;
  await queue.close();
  connection.disconnect();
  return bytes;
}

const wanted = new Set(process.argv.slice(2));
const all = wanted.size === 0;
let rate = 0;
if (all || wanted.has("throughput")) {
  rate = await throughput(1);
  await throughput(2);
}
if (all || wanted.has("lone")) await lone();
if (all || wanted.has("map")) await mapFanOut();
if (all || wanted.has("latency")) await latency(rate || Number(process.env.BENCH_RATE ?? 3000));
if (all || wanted.has("timers")) await timers();
if (all || wanted.has("memory")) await memory();
process.exit(0);
