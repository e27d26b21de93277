// What starting a process costs: `stepwise serve` through bin/stepwise.js (what a user,
// a container and every end-to-end test runs), from spawn to its first 200 on /health,
// and the CPU it used by then; and `stepwise --help` (to its exit; CPU as it prints),
// the floor of every client command.
//
//   npx tsx bench/start-cost.ts [runs=7]
//
// Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); its keys, under bench-start-*,
// are deleted at the end.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "../scripts/free-port.js";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "bin/stepwise.js");
const runs = Number(process.argv[2] ?? 7);
const redis = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** Each serve's keys go under `<PREFIX>-<port>`; all are deleted at the end. */
const PREFIX = "bench-start";

/** CPU (user + system) a live process has used, in ms, from /proc (Linux). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in 10 ms ticks
}

async function serveOnce(): Promise<{ readyMs: number; cpuMs: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, "serve"], {
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      REDIS_URL: redis,
      STEPWISE_PREFIX: `${PREFIX}-${port}`,
      STEPWISE_LOG_LEVEL: "warn",
    },
    stdio: "ignore",
  });
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  const result = { readyMs: performance.now() - started, cpuMs: cpuMs(child.pid!) };
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  return result;
}

/** `stepwise --help` to its exit; its CPU read from /proc as it prints (its last moment). */
async function helpOnce(): Promise<{ readyMs: number; cpuMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, "--help"], { stdio: ["ignore", "pipe", "ignore"] });
  let cpu = NaN;
  child.stdout.once("data", () => {
    try {
      cpu = cpuMs(child.pid!);
    } catch {
      // already gone
    }
  });
  child.stdout.resume();
  await new Promise((r) => child.once("exit", r));
  return { readyMs: performance.now() - started, cpuMs: cpu };
}

function summary(label: string, xs: { readyMs: number; cpuMs: number }[]): void {
  const fmt = (values: number[]): string => {
    const s = [...values].sort((a, b) => a - b);
    return `${s[0]!.toFixed(0)}/${s[Math.floor(s.length / 2)]!.toFixed(0)}/${s.at(-1)!.toFixed(0)} ms`;
  };
  console.log(
    `${label.padEnd(16)} ready ${fmt(xs.map((x) => x.readyMs))}   cpu ${fmt(xs.map((x) => x.cpuMs))}   (min/median/max of ${xs.length})`,
  );
}

const serves = [];
for (let i = 0; i < runs; i++) serves.push(await serveOnce());
summary("stepwise serve", serves);
const helps = [];
for (let i = 0; i < runs; i++) helps.push(await helpOnce());
summary("stepwise --help", helps);

// What the services wrote (their shards' queue metadata): gone with the bench.
const client = new Redis(redis);
let cursor = "0";
do {
  const [next, keys] = await client.scan(cursor, "MATCH", `${PREFIX}-*`, "COUNT", 1000);
  cursor = next;
  if (keys.length > 0) await client.unlink(...keys);
} while (cursor !== "0");
client.disconnect();
