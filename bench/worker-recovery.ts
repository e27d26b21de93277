/**
 * How soon a killed worker's jobs move on. A worker process takes N executions'
 * HTTP task calls, which a local server holds open; a second worker is started,
 * the first is killed with SIGKILL (no chance to hand anything back), and the bench
 * prints how long after the kill each call arrived again (its job's lock expired,
 * BullMQ's stalled check handed it to the live worker) and when all executions ended.
 *
 *   npx tsx bench/worker-recovery.ts [--executions N]
 *
 * Governed by STEPWISE_LOCK_MS and STEPWISE_STALLED_MS (defaults 3000 and 1000):
 * the bound is about their sum. Issue 13 measured 30–45 s with the old 30 s / 15 s.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { createRedisRuntime } from "../runtime/runtime.js";

const ROOT = resolve(import.meta.dirname, "..");
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const at = process.argv.indexOf("--executions");
const N = at >= 0 ? Number(process.argv[at + 1]) : 20;
// A worker makes at most 64 task calls at once (--task-concurrency): all must be held by the first.
if (!(N >= 1 && N <= 64)) throw new Error("--executions must be 1 to 64");
const prefix = `bench-recovery-${randomBytes(4).toString("hex")}`;

const held: ServerResponse[] = [];
const calls = new Map<string, number[]>();
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const id = String(req.headers["x-stepwise-execution"]);
  const times = calls.get(id) ?? [];
  times.push(Date.now());
  calls.set(id, times);
  if (times.length === 1)
    held.push(res); // the first worker's call: never answered
  else res.writeHead(200, { "content-type": "application/json" }).end("{}");
});
await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/work`;

function worker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "bench/redis-worker.ts")], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL, STEPWISE_PREFIX: prefix, STEPWISE_EGRESS_ALLOW: "127.0.0.1" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((ok) =>
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && ok(child)),
  );
}

const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
await runtime.createStateMachine("call", {
  StartAt: "Call",
  States: {
    Call: {
      Type: "Task",
      Resource: "arn:aws:states:::http:invoke",
      Parameters: { ApiEndpoint: url },
      End: true,
    },
  },
} as never);
const first = await worker();
const ids: string[] = [];
for (let i = 0; i < N; i++)
  ids.push((await runtime.startExecution("call", { input: {} })).executionId);
while (calls.size < N) await new Promise((r) => setTimeout(r, 20));
const second = await worker();
const killedAt = Date.now();
first.kill("SIGKILL");
await Promise.all(ids.map((id) => runtime.waitForExecution(id, 120_000)));
const ended = Date.now() - killedAt;
const again = [...calls.values()].map((t) => (t[1] ?? NaN) - killedAt).sort((a, b) => a - b);
const p50 = again[Math.floor(again.length / 2)]!;
console.log(
  `lock ${process.env.STEPWISE_LOCK_MS ?? 3000} ms, stalled check ${process.env.STEPWISE_STALLED_MS ?? 1000} ms: ` +
    `${N} calls held by a worker killed with SIGKILL arrived again ${again[0]}–${again.at(-1)} ms after the kill (p50 ${p50}); all ended ${ended} ms after it`,
);

second.kill("SIGTERM");
await new Promise((r) => second.once("exit", r));
for (const res of held) res.destroy();
server.close();
await runtime.close();
const redis = new Redis(REDIS_URL);
let cursor = "0";
do {
  const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
  cursor = next;
  if (keys.length > 0) await redis.unlink(...keys);
} while (cursor !== "0");
redis.disconnect();
