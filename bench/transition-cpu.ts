// CPU per transition (driver and one worker in this process), which a busy shared
// machine disturbs less than transitions per second. Run in a checkout:
//   npx tsx bench/transition-cpu.ts
// For an A/B of two checkouts, copy this file into the other one (or set ROOT to it).
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { Redis } from "ioredis";

const ROOT = resolve(process.env.ROOT ?? resolve(import.meta.dirname, ".."));
const { createRedisRuntime } = (await import(
  `${ROOT}/runtime/runtime.ts`
)) as typeof import("../runtime/runtime.js");
const { startWorker } = (await import(
  `${ROOT}/runtime/worker/worker.ts`
)) as typeof import("../runtime/worker/worker.js");
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const N = 1500;
const CHAIN = 20;

const prefix = `cpub-${randomBytes(4).toString("hex")}`;
const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
const States: Record<string, object> = {};
for (let i = 0; i < CHAIN; i++)
  States[`S${i}`] =
    i + 1 < CHAIN ? { Type: "Pass", Next: `S${i + 1}` } : { Type: "Pass", End: true };
await runtime.createStateMachine("chain", { StartAt: "S0", States } as never);
const worker = await startWorker({
  redisUrl: REDIS_URL,
  prefix,
  concurrency: 64,
  onError: () => {},
});
const sub = new Redis(REDIS_URL);
let ended = 0;
await sub.subscribe(...(await runtime.shardLayout()).shards.map((k) => k.endedChannel));
sub.on("message", () => (ended += 1));

async function batch(n: number, tag: string): Promise<void> {
  const target = ended + n;
  await Promise.all(
    Array.from({ length: n }, (_, i) => runtime.startExecution("chain", { name: `${tag}${i}` })),
  );
  while (ended < target) await new Promise((r) => setTimeout(r, 5));
}

await batch(100, "warm"); // compile, connect, fill caches
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await batch(N, "c");
const cpu = process.cpuUsage(cpu0);
const seconds = (performance.now() - t0) / 1000;
const transitions = N * (CHAIN + 1);
console.log(
  `${ROOT}: ${((cpu.user + cpu.system) / transitions).toFixed(1)} µs of CPU per transition, ${(transitions / seconds).toFixed(0)} transitions/s`,
);
sub.disconnect();
await worker.close(2000);
await runtime.close();
const redis = new Redis(REDIS_URL);
let cursor = "0";
do {
  const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 5000);
  cursor = next;
  if (keys.length > 0) await redis.unlink(...keys);
} while (cursor !== "0");
redis.disconnect();
