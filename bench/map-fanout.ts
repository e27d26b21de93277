/**
 * A wide inline Map (issue 43, item 2), through the product as a user starts it,
 * against a BullMQ FlowProducer doing the same shape, in the same run.
 *
 *   npx tsx bench/map-fanout.ts [--items 10000,40000] [--workers 1,2] [--rounds 1]
 *                               [--maps 1] [--bin PATH] [--compare PATH] [--no-anchor]
 *                               [--commands]
 *
 * Stepwise: `node bin/stepwise.js serve` (API and worker in one process), plus
 * `node bin/stepwise.js worker` processes for `--workers 2` (and more), configured by
 * the environment as the README documents it, on a private redis-server (a free port,
 * nothing on disk) that this bench starts and kills. One state machine: an inline Map
 * (not DISTRIBUTED) whose ItemProcessor is one Pass; one execution of N items (the
 * input, a list of N numbers) started over REST, timed until it SUCCEEDED. With
 * `--maps K`, K executions of N/K items each run at once instead (how several Maps
 * share two workers).
 * Anchor: a BullMQ FlowProducer flow of N children and one parent, run by as many
 * worker processes (concurrency 64 each); each child writes a history entry (RPUSH of a
 * small JSON) and returns a value, the parent collects the children's values
 * (getChildrenValues) and writes one entry.
 * `--compare PATH`: another build's bin/stepwise.js (e.g. a worktree of the commit
 * before, built with `npm run build`), measured in the same rounds.
 *
 * Per case it prints items/s, the ratio to the anchor of the same round and worker
 * count, and per item: Redis commands (INFO commandstats delta, commands run by scripts
 * included), EVALSHA calls, bytes Redis received, Redis CPU (INFO cpu) and the CPU of the
 * worker processes (user + system, /proc/<pid>/stat), which on a shared 2-core machine
 * wobble much less than the rates (`--commands`: the commands with most calls per item,
 * commands run by scripts included). Every process runs a 1,000-item warm-up first.
 * dist/ is rebuilt first when the sources are newer (as test/global-build.ts does).
 * BENCH_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) goes to the Stepwise processes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { Agent } from "node:http";
import { FlowProducer } from "bullmq";
import { Redis } from "ioredis";
import { freePort } from "../scripts/free-port.js";
import buildIfStale from "../test/global-build.js";
import { cpuMs, postJson, privateRedis } from "./harness.js";

const ROOT = resolve(import.meta.dirname, "..");

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0) return process.argv[i + 1];
  return process.argv
    .slice(2)
    .find((a) => a.startsWith(`${name}=`))
    ?.slice(name.length + 1);
}
function numbers(name: string, fallback: number[]): number[] {
  const raw = option(name);
  if (raw === undefined) return fallback;
  const list = raw.split(",").map(Number);
  if (list.some((n) => !Number.isInteger(n) || n <= 0))
    throw new Error(`--${name} needs positive integers, comma-separated`);
  return list;
}

const SIZES = numbers("items", [10_000, 40_000]);
const WORKERS = numbers("workers", [1, 2]);
const ROUNDS = numbers("rounds", [1])[0]!;
const MAPS = numbers("maps", [1])[0]!;
const ANCHOR = !process.argv.includes("--no-anchor");
const COMMANDS = process.argv.includes("--commands");
const BIN = resolve(option("bin") ?? join(ROOT, "bin/stepwise.js"));
const COMPARE = option("compare") && resolve(option("compare")!);
const WARM_UP = 1_000;
const ANCHOR_CONCURRENCY = 64;

async function waitFor(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 900_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function quiet(redis: Redis): Redis {
  redis.on("error", () => {});
  return redis;
}

/** What Redis did meanwhile: commands (all, EVALSHA), bytes received, CPU seconds. */
interface RedisCounters {
  calls: number;
  evalsha: number;
  inputBytes: number;
  cpuSeconds: number;
  /** Calls by command (`--commands` prints the top ones per item). */
  byCommand: Map<string, number>;
}

async function redisCounters(redis: Redis): Promise<RedisCounters> {
  const [stats, cpu, info] = await Promise.all([
    redis.info("commandstats"),
    redis.info("cpu"),
    redis.info("stats"),
  ]);
  let calls = 0;
  let evalsha = 0;
  const byCommand = new Map<string, number>();
  for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls += Number(m[2]);
    byCommand.set(m[1]!, Number(m[2]));
    if (m[1] === "evalsha" || m[1] === "eval") evalsha += Number(m[2]);
  }
  const num = (text: string, field: string) =>
    Number(new RegExp(`^${field}:([\\d.]+)`, "m").exec(text)?.[1] ?? NaN);
  return {
    calls,
    evalsha,
    inputBytes: num(info, "total_net_input_bytes"),
    cpuSeconds: num(cpu, "used_cpu_user") + num(cpu, "used_cpu_sys"),
    byCommand,
  };
}

/** One measured case. */
interface Figures {
  itemsPerSecond: number;
  commands: number;
  evalsha: number;
  bytes: number;
  redisUs: number;
  workerUs: number;
  /** Each process's share of `workerUs` (serve first). */
  perProcessUs: number[];
  /** The commands with most calls per item, `name n.n`. */
  top: string;
}

/** Measures `run` (which processes `items` items) on Redis and the given processes. */
async function measure(
  redis: Redis,
  pids: number[],
  items: number,
  run: () => Promise<void>,
): Promise<Figures> {
  const cpu0 = pids.map(cpuMs);
  const r0 = await redisCounters(redis);
  const t0 = performance.now();
  await run();
  const seconds = (performance.now() - t0) / 1000;
  const r1 = await redisCounters(redis);
  const each = pids.map((pid, i) => cpuMs(pid) - cpu0[i]!);
  const cpu = each.reduce((sum, ms) => sum + ms, 0);
  // The counters' own INFO calls (3 before, 3 after) are not the case's.
  return {
    itemsPerSecond: items / seconds,
    commands: (r1.calls - r0.calls - 3) / items,
    evalsha: (r1.evalsha - r0.evalsha) / items,
    bytes: (r1.inputBytes - r0.inputBytes) / items,
    redisUs: ((r1.cpuSeconds - r0.cpuSeconds) * 1e6) / items,
    workerUs: (cpu * 1000) / items,
    perProcessUs: each.map((ms) => (ms * 1000) / items),
    top: [...r1.byCommand]
      .map(([name, n]) => [name, (n - (r0.byCommand.get(name) ?? 0)) / items] as const)
      .filter(([, n]) => n >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 14)
      .map(([name, n]) => `${name} ${n.toFixed(2)}`)
      .join(", "),
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

const FAN = {
  StartAt: "Fan",
  States: {
    Fan: {
      Type: "Map",
      ItemProcessor: {
        StartAt: "One",
        // A small result: 40,000 of them collected stay under the 256 KiB payload limit.
        States: { One: { Type: "Pass", Result: 1, End: true } },
      },
      End: true,
    },
  },
};

/** `bin/stepwise.js serve` plus `workers - 1` `bin/stepwise.js worker`, on their own prefix. */
async function startStepwise(
  bin: string,
  url: string,
  prefix: string,
  workers: number,
): Promise<{ port: number; procs: ChildProcess[] }> {
  const port = await freePort();
  const env = {
    ...process.env,
    REDIS_URL: url,
    PORT: String(port),
    STEPWISE_PREFIX: prefix,
    STEPWISE_LOG_LEVEL: "warn",
    STEPWISE_START_RATE: "0",
    // Each item writes four history events: 40,000 items are past AWS's 25,000.
    STEPWISE_MAX_HISTORY_EVENTS: "0",
  };
  const nodeArgs = [
    // The young generation the Docker image gives worker processes (Dockerfile, bin/stepwise.js).
    "--max-semi-space-size=64",
    ...(process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
  ];
  const spawnOne = (command: string): ChildProcess =>
    spawn(process.execPath, [...nodeArgs, bin, command], {
      env,
      stdio: ["ignore", "ignore", "inherit"],
    });
  const procs = [spawnOne("serve")];
  try {
    await waitFor(async () => {
      if (procs[0]!.exitCode !== null) throw new Error(`serve exited ${procs[0]!.exitCode}`);
      const r = await postJson(agent, port, "/v1/state-machines", {
        name: "fan",
        definition: FAN,
      }).catch(() => undefined);
      // 503 while it connects to Redis; 409 when a try before created it.
      if (r === undefined || r.status === 503) return false;
      if (r.status >= 400 && r.status !== 409) throw new Error(`create: ${r.text}`);
      return true;
    }, "serve");
    for (let i = 1; i < workers; i++) procs.push(spawnOne("worker"));
    // A worker is ready when its schedule loop runs: give it its start-up (it loads the bundle).
    if (workers > 1) await new Promise((r) => setTimeout(r, 2_000));
    return { port, procs };
  } catch (err) {
    await stopAll(procs);
    throw err;
  }
}

async function stopAll(procs: ChildProcess[]): Promise<void> {
  await Promise.all(
    procs.map((proc) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return undefined;
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      return exited;
    }),
  );
}

let started = 0;

/**
 * Runs `maps` executions of `items / maps` items at once and waits for every one to
 * succeed: each start waits for its end (`?wait=`, as a user would); one still running
 * after that is polled every second (a describe reads the Map's runs: not every 25 ms).
 */
async function runMaps(port: number, items: number, maps: number): Promise<void> {
  await Promise.all(
    Array.from({ length: maps }, async (_, m) => {
      const n = Math.floor(items / maps) + (m < items % maps ? 1 : 0);
      const r = await postJson(agent, port, "/v1/state-machines/fan/executions?wait=300", {
        name: `fan-${++started}`,
        input: Array.from({ length: n }, (_, i) => i),
      });
      if (r.status !== 201 && r.status !== 200) throw new Error(`start: ${r.status} ${r.text}`);
      let { executionId: id, status } = JSON.parse(r.text) as {
        executionId: string;
        status: string;
      };
      while (status === "RUNNING") {
        await new Promise((ok) => setTimeout(ok, 1_000));
        const res = await fetch(`http://127.0.0.1:${port}/v1/executions/${encodeURIComponent(id)}`);
        status = ((await res.json()) as { status: string }).status;
      }
      if (status !== "SUCCEEDED") throw new Error(`execution ${id}: ${status}`);
    }),
  );
}

async function stepwiseCase(
  bin: string,
  url: string,
  redis: Redis,
  prefix: string,
  workers: number,
  items: number,
): Promise<Figures> {
  const { port, procs } = await startStepwise(bin, url, prefix, workers);
  try {
    await runMaps(port, WARM_UP, MAPS);
    return await measure(
      redis,
      procs.map((p) => p.pid!),
      items,
      () => runMaps(port, items, MAPS),
    );
  } finally {
    await stopAll(procs);
  }
}

/** The anchor's worker process: children write a history entry, the parent collects. */
const ANCHOR_WORKER = `
import { Worker } from "bullmq";
import { Redis } from "ioredis";
const url = process.env.ANCHOR_URL, prefix = process.env.ANCHOR_PREFIX;
const writes = new Redis(url);
const opts = (name) => ({ connection: new Redis(url, { maxRetriesPerRequest: null }), prefix,
  concurrency: ${ANCHOR_CONCURRENCY}, removeOnComplete: { count: 0 }, drainDelay: 1, name });
const items = new Worker("items", async (job) => {
  const entry = JSON.stringify({ type: "MapIterationSucceeded", index: job.data.i, output: 1, at: Date.now() });
  await writes.rpush(prefix + ":history:" + job.data.flow, entry);
  return 1;
}, opts("items"));
const maps = new Worker("maps", async (job) => {
  const values = await job.getChildrenValues();
  const n = Object.keys(values).length;
  await writes.rpush(prefix + ":history:" + job.data.flow, JSON.stringify({ type: "MapStateExited", items: n }));
  await writes.rpush(prefix + ":done", job.data.flow);
  return n;
}, opts("maps"));
await Promise.all([items.waitUntilReady(), maps.waitUntilReady()]);
console.log("ready");
`;

async function anchorCase(
  url: string,
  redis: Redis,
  prefix: string,
  workers: number,
  items: number,
): Promise<Figures> {
  const procs = Array.from({ length: workers }, () =>
    spawn(process.execPath, ["--input-type=module", "-e", ANCHOR_WORKER], {
      cwd: ROOT,
      env: { ...process.env, ANCHOR_URL: url, ANCHOR_PREFIX: prefix },
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  const connection = quiet(new Redis(url, { maxRetriesPerRequest: null }));
  const done = quiet(new Redis(url, { maxRetriesPerRequest: null }));
  const flows = new FlowProducer({ connection, prefix });
  let flow = 0;
  const runFlows = async (n: number): Promise<void> => {
    const names: string[] = [];
    for (let m = 0; m < MAPS; m++) {
      const size = Math.floor(n / MAPS) + (m < n % MAPS ? 1 : 0);
      const name = `flow-${++flow}`;
      names.push(name);
      await flows.add({
        name: "map",
        queueName: "maps",
        data: { flow: name },
        children: Array.from({ length: size }, (_, i) => ({
          name: "item",
          queueName: "items",
          data: { flow: name, i },
        })),
      });
    }
    for (let left = names.length; left > 0; left--) await done.blpop(`${prefix}:done`, 0);
  };
  try {
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((ok, fail) => {
            p.once("exit", (code) => fail(new Error(`anchor worker exited ${code}`)));
            p.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && ok());
          }),
      ),
    );
    await runFlows(WARM_UP);
    return await measure(
      redis,
      procs.map((p) => p.pid!),
      items,
      () => runFlows(items),
    );
  } finally {
    await flows.close();
    connection.disconnect();
    done.disconnect();
    for (const p of procs) p.removeAllListeners("exit");
    await stopAll(procs);
  }
}

function line(name: string, f: Figures, anchor: Figures | undefined): string {
  const ratio = anchor ? ` (${(f.itemsPerSecond / anchor.itemsPerSecond).toFixed(2)}×)` : "";
  return (
    `  ${name.padEnd(22)} ${f.itemsPerSecond.toFixed(0).padStart(6)} items/s${ratio.padEnd(9)}` +
    ` | per item: ${f.commands.toFixed(1)} commands, ${f.evalsha.toFixed(2)} EVALSHA,` +
    ` ${(f.bytes / 1024).toFixed(2)} KB in, Redis ${f.redisUs.toFixed(0)} µs,` +
    ` workers ${f.workerUs.toFixed(0)} µs CPU` +
    (f.perProcessUs.length > 1
      ? ` (${f.perProcessUs.map((us) => us.toFixed(0)).join(" + ")})`
      : "") +
    (COMMANDS ? `\n      commands per item: ${f.top}` : "")
  );
}

async function main(): Promise<void> {
  if (BIN === resolve(ROOT, "bin/stepwise.js")) await buildIfStale();
  const server = await privateRedis();
  const redis = quiet(new Redis(server.url));
  const targets: [string, string][] = [["stepwise", BIN]];
  if (COMPARE) targets.push(["compared", COMPARE]);
  const all = new Map<string, Figures[]>();
  let n = 0;
  try {
    console.log(
      `map fan-out: inline Map of one-Pass items${MAPS > 1 ? `, ${MAPS} Maps at once` : ""}; anchor: BullMQ FlowProducer; private redis-server ${server.url}`,
    );
    for (let round = 1; round <= ROUNDS; round++) {
      for (const items of SIZES) {
        for (const workers of WORKERS) {
          console.log(`round ${round}, ${items} items, ${workers} worker process(es):`);
          const anchor = ANCHOR
            ? await anchorCase(server.url, redis, `anchor${++n}`, workers, items)
            : undefined;
          if (anchor) console.log(line("anchor (FlowProducer)", anchor, undefined));
          for (const [name, bin] of targets) {
            const f = await stepwiseCase(bin, server.url, redis, `sw${++n}`, workers, items);
            console.log(line(name, f, anchor));
            const key = `${name} ${items} ×${workers}`;
            all.set(key, [...(all.get(key) ?? []), f]);
          }
          // The private Redis is ours alone: empty it between cases.
          await redis.flushall();
        }
      }
    }
  } finally {
    redis.disconnect();
    server.stop();
    agent.destroy();
  }
  // 2 workers against 1, same build and size.
  for (const [name] of targets)
    for (const items of SIZES) {
      const one = all.get(`${name} ${items} ×1`);
      const two = all.get(`${name} ${items} ×2`);
      if (!one || !two) continue;
      const ratios = two.map((f, i) => (f.itemsPerSecond / one[i]!.itemsPerSecond).toFixed(2));
      console.log(`${name}, ${items} items: 2 workers / 1 worker = ${ratios.join(", ")}`);
    }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
