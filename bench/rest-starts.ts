/**
 * Starting executions over REST, against the least a service that starts jobs can do.
 *
 *   npx tsx bench/rest-starts.ts [--rounds R] [--requests N] [--clients C]
 *                                [--bin PATH] [--compare PATH]
 *
 * Stepwise: `bin/stepwise.js serve` (API and worker in one process, as the README
 * starts it) on a fresh key prefix with the start quota off (STEPWISE_START_RATE=0), a 3-state Pass machine, each request
 * `POST /v1/state-machines/three-passes/executions?wait=5`: started, run to its
 * end by the worker and answered with its output.
 * Anchor: a bare fastify process whose one route does what any durable start must
 * at least do, one `MULTI HSET + XADD` (a record and a queue entry), and answers
 * 201; nothing runs the job.
 *
 * Each round measures both, one after the other, the same way: N sequential
 * requests (p50 latency), then N × 4 requests from C concurrent keep-alive clients
 * (requests per second), and each server process's CPU time per request (user +
 * system, from /proc: on a shared machine the rates move with the neighbours'
 * load, the CPU a request costs much less). Prints each round, then
 * min/median/max and the ratios. `--bin` runs another build's `bin/stepwise.js`;
 * `--compare` adds one, measured in the same rounds (a clone of an earlier commit).
 * The client is this process: on 2 cores it takes a share of the CPU from either.
 * Targets (issue 43): ≥ 0.4× the anchor's rate with 20 clients; sequential p50 ≤ 1 ms.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Agent } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { resolve } from "node:path";
import { Redis } from "ioredis";
import { countOption, cpuMs, pct, postJson, REDIS_URL } from "./harness.js";

const ROUNDS = countOption("rounds", 3);
const REQUESTS = countOption("requests", 1000);
const CLIENTS = countOption("clients", 20);
const ROOT = resolve(import.meta.dirname, "..");
function path(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? resolve(process.argv[i + 1]!) : undefined;
}
const BIN = path("bin") ?? resolve(ROOT, "bin/stepwise.js");
/** Another build measured in the same rounds (e.g. a clone of the commit before). */
const COMPARE = path("compare");

/** The anchor's server: one route, one MULTI of HSET + XADD, as `node -e` (no tsx in the way). */
const ANCHOR = `
const Fastify = require("fastify");
const { Redis } = require("ioredis");
const { randomUUID } = require("node:crypto");
const redis = new Redis(process.env.REDIS_URL);
const prefix = process.env.ANCHOR_PREFIX;
const app = Fastify({ logger: false });
app.post("/start", async (req, reply) => {
  const id = randomUUID();
  const startedAt = new Date().toISOString();
  await redis.multi()
    .hset(prefix + "x:" + id, "st", "RUNNING", "in", JSON.stringify(req.body?.input ?? {}), "t0", startedAt)
    .xadd(prefix + "jobs", "*", "id", id)
    .exec();
  reply.code(201);
  return { executionId: id, startedAt };
});
app.listen({ port: Number(process.env.ANCHOR_PORT), host: "127.0.0.1" }).then(() => console.log("ready"));
`;

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => ok(port));
    });
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function post(
  port: number,
  path: string,
  body: unknown,
): Promise<{ status: number; text: string }> {
  return postJson(agent, port, path, body);
}

async function ready(
  port: number,
  path: string,
  body: unknown,
  child: ChildProcess,
): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    try {
      if ((await post(port, path, body)).status < 500) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > until) throw new Error(`no answer on port ${port} in 30 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Target {
  name: string;
  port: number;
  pid: number;
  path: string;
  /** What a good answer looks like (Stepwise's: the execution SUCCEEDED). */
  ok: (status: number, text: string) => boolean;
}

async function sequential(target: Target, n: number): Promise<number> {
  const latencies: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await post(target.port, target.path, { input: { i } });
    latencies.push(performance.now() - t0);
    if (!target.ok(r.status, r.text)) throw new Error(`${target.name}: ${r.status} ${r.text}`);
  }
  return pct(latencies, 50);
}

async function concurrent(target: Target, n: number, clients: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < n) {
        next++;
        const r = await post(target.port, target.path, { input: { n: next } });
        if (!target.ok(r.status, r.text)) throw new Error(`${target.name}: ${r.status} ${r.text}`);
      }
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

function spread(values: number[], digits: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  return [sorted[0]!, pct(sorted, 50), sorted[sorted.length - 1]!]
    .map((v) => v.toFixed(digits))
    .join(" / ");
}

const MACHINE = {
  name: "three-passes",
  definition: {
    StartAt: "A",
    States: {
      A: { Type: "Pass", Next: "B" },
      B: { Type: "Pass", Next: "C" },
      C: { Type: "Pass", End: true },
    },
  },
};

/** `stepwise serve` of a build, on its own key prefix, with the machine created. */
async function serveStepwise(
  name: string,
  bin: string,
  prefix: string,
): Promise<Target & { child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [bin, "serve", "--port", String(port)], {
    env: {
      ...process.env,
      REDIS_URL,
      STEPWISE_PREFIX: prefix,
      STEPWISE_LOG_LEVEL: "error",
      // The start quota (300/s per key, AWS's) would measure itself, not the path.
      STEPWISE_START_RATE: "0",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  await ready(port, "/v1/state-machines", MACHINE, child);
  return {
    name,
    port,
    pid: child.pid!,
    child,
    path: "/v1/state-machines/three-passes/executions?wait=5",
    ok: (status, text) => status === 201 && text.includes('"SUCCEEDED"'),
  };
}

async function main(): Promise<void> {
  const prefix = `rsbench${randomBytes(4).toString("hex")}`;
  const anchorPort = await freePort();
  const anchor = spawn(process.execPath, ["-e", ANCHOR], {
    cwd: ROOT,
    env: {
      ...process.env,
      REDIS_URL,
      ANCHOR_PREFIX: `${prefix}-anchor:`,
      ANCHOR_PORT: String(anchorPort),
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const children: ChildProcess[] = [anchor];
  const redis = new Redis(REDIS_URL);
  try {
    const stepwise = await serveStepwise("stepwise", BIN, prefix);
    children.push(stepwise.child);
    const targets: Target[] = [stepwise];
    if (COMPARE) {
      const before = await serveStepwise("compared", COMPARE, `${prefix}b`);
      children.push(before.child);
      targets.push(before);
    }
    await ready(anchorPort, "/start", {}, anchor);
    targets.push({
      name: "anchor",
      port: anchorPort,
      pid: anchor.pid!,
      path: "/start",
      ok: (status) => status === 201,
    });
    // Warm-up: JIT, connections, scripts loaded.
    for (const target of targets) await concurrent(target, 2000, CLIENTS);
    const p50 = new Map(targets.map((t) => [t.name, [] as number[]]));
    const rate = new Map(targets.map((t) => [t.name, [] as number[]]));
    const cpu = new Map(targets.map((t) => [t.name, [] as number[]]));
    for (let round = 1; round <= ROUNDS; round++) {
      const line: string[] = [];
      for (const target of targets) {
        const before = cpuMs(target.pid);
        const latency = await sequential(target, REQUESTS);
        const perSecond = await concurrent(target, REQUESTS * 4, CLIENTS);
        const perRequest = ((cpuMs(target.pid) - before) * 1000) / (REQUESTS * 5);
        p50.get(target.name)!.push(latency);
        rate.get(target.name)!.push(perSecond);
        cpu.get(target.name)!.push(perRequest);
        line.push(
          `${target.name} p50 ${latency.toFixed(2)} ms, ${Math.round(perSecond)}/s, ${Math.round(perRequest)} µs CPU/request`,
        );
      }
      console.log(`round ${round}: ${line.join("; ")}`);
    }
    const names = targets.map((t) => t.name);
    const each = (m: Map<string, number[]>, digits: number, unit: string) =>
      names.map((n) => `${n} ${spread(m.get(n)!, digits)}${unit}`).join(", ");
    console.log(`sequential p50 (min / median / max): ${each(p50, 2, " ms")}`);
    console.log(`server CPU per request: ${each(cpu, 0, " µs")}`);
    const ratios = (name: string) =>
      spread(
        rate.get(name)!.map((r, i) => r / rate.get("anchor")![i]!),
        2,
      );
    console.log(
      `${CLIENTS} clients, requests/s: ${each(rate, 0, "")}; ratio to the anchor per round: ${names
        .filter((n) => n !== "anchor")
        .map((n) => `${n} ${ratios(n)}`)
        .join(", ")}`,
    );
  } finally {
    for (const child of children) {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
    }
    for (const pattern of [`${prefix}*`, `bull:${prefix}*`]) {
      const stream = redis.scanStream({ match: pattern, count: 1000 });
      for await (const keys of stream as AsyncIterable<string[]>)
        if (keys.length > 0) await redis.unlink(...keys);
    }
    redis.disconnect();
    agent.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
