// Wide joins through one `stepwise serve` (issues 20 and 21), at the sizes the test suite
// leaves out: a Map of 16,000 items and a Parallel of 16,000 branches (the sizes that
// crashed the service) and a Map of 40,000 items (about what 256 KiB of input holds).
// test/e2e/wide-joins.test.ts runs joins of 1,600, which cross the same batching
// boundaries (1,000 children started per step, inputs kept in HSETs of 500, outputs
// collected in HMGETs of 1,000) once instead of many times.
//
// Run: npx tsx bench/wide-joins.ts [map=16000,40000] [parallel=16000]
// It prints each join's time and children per second, alone and then a Map and a
// Parallel of the same width at once (as the test ran them), then how /health
// answered (polled every 250 ms) and whether serve kept its pid. Uses REDIS_URL (default
// 127.0.0.1:6379) under a random key prefix, deleted afterwards.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { freePort } from "../scripts/free-port.js";
import { deleteKeys } from "../test/integration/helpers.js";
import { pct, REDIS_URL } from "./harness.js";

const ROOT = resolve(import.meta.dirname, "..");

function sizes(name: string, fallback: number[]): number[] {
  const arg = process.argv.slice(2).find((a) => a.startsWith(`${name}=`));
  return arg
    ? arg
        .slice(name.length + 1)
        .split(",")
        .map(Number)
    : fallback;
}
const MAPS = sizes("map", [16_000, 40_000]);
const PARALLELS = sizes("parallel", [16_000]);

const onePass = { StartAt: "P", States: { P: { Type: "Pass", End: true } } };

function parallelOf(branches: number): object {
  return {
    StartAt: "Par",
    States: {
      Par: {
        Type: "Parallel",
        // Names in base 36: 16,000 branches stay under the 1 MiB body limit (928 KB).
        Branches: Array.from({ length: branches }, (_, i) => ({
          StartAt: i.toString(36),
          States: { [i.toString(36)]: { Type: "Pass", End: true } },
        })),
        End: true,
      },
    },
  };
}

const prefix = `bench-wide-${randomBytes(4).toString("hex")}`;
const port = await freePort();
const api = `http://127.0.0.1:${port}`;
// The sources, not dist/ (as bench/throughput-vs-bullmq.ts starts serve).
const script = `import { main } from ${JSON.stringify(join(ROOT, "cli/main.ts"))};
  const io = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };
  process.exitCode = await main(["serve"], io);`;
const serve = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
  cwd: ROOT,
  env: {
    ...process.env,
    REDIS_URL,
    PORT: String(port),
    STEPWISE_PREFIX: prefix,
    LOG_LEVEL: "warn",
    // A join of 16,000 children writes more history events than AWS's 25,000.
    STEPWISE_MAX_HISTORY_EVENTS: "0",
  },
  stdio: ["ignore", "ignore", "pipe"],
});
let serveErrors = "";
serve.stderr!.on("data", (c: Buffer) => (serveErrors += c.toString()));
const pid = serve.pid;

async function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(api + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 1_200_000;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts `machine` and waits for its end: the seconds it took, and its record. */
async function run(machine: string, input: unknown): Promise<{ seconds: number; record: any }> {
  const t0 = performance.now();
  const started = await post(`/v1/state-machines/${machine}/executions`, { input });
  if (started.status !== 201) throw new Error(`start ${machine}: ${JSON.stringify(started.body)}`);
  const id = encodeURIComponent(started.body.executionId as string);
  const record = await waitFor(async () => {
    const r = (await (await fetch(`${api}/v1/executions/${id}`)).json()) as { status: string };
    return r.status === "RUNNING" ? undefined : r;
  }, machine);
  return { seconds: (performance.now() - t0) / 1000, record };
}

function line(label: string, width: number, result: { seconds: number; record: any }): string {
  const { seconds, record } = result;
  const rate = (width / seconds).toFixed(0);
  return `${label} of ${width.toLocaleString("en")}: ${record.status} in ${seconds.toFixed(2)} s (${rate} children/s)`;
}

const health = { ok: 0, other: [] as string[], ms: [] as number[] };
let monitor: NodeJS.Timeout | undefined;
try {
  await waitFor(async () => ((await fetch(`${api}/health`)).ok ? true : undefined), "serve");
  monitor = setInterval(() => {
    const t0 = performance.now();
    fetch(`${api}/health`, { signal: AbortSignal.timeout(10_000) })
      .then((r) => {
        health.ms.push(performance.now() - t0);
        if (r.status === 200) health.ok++;
        else health.other.push(`HTTP ${r.status}`);
      })
      .catch((err: unknown) => health.other.push(String(err)));
  }, 250);
  const create = async (name: string, definition: object): Promise<string> => {
    const created = await post("/v1/state-machines", { name, definition });
    if (created.status !== 201) throw new Error(`create ${name}: ${JSON.stringify(created.body)}`);
    return name;
  };
  const map = await create("wide-map", {
    StartAt: "M",
    States: { M: { Type: "Map", ItemProcessor: onePass, MaxConcurrency: 0, End: true } },
  });
  const items = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
  for (const n of MAPS) console.log(line("Map", n, await run(map, items(n))));
  for (const n of PARALLELS) {
    const parallel = await create(`wide-parallel-${n}`, parallelOf(n));
    console.log(line("Parallel", n, await run(parallel, { x: 1 })));
    // Both kinds at once, as the test ran them: one execution's commits take turns,
    // so two wide joins together should take about as long as the larger alone.
    const t0 = performance.now();
    const both = await Promise.all([run(map, items(n)), run(parallel, { x: 1 })]);
    const statuses = both.map((r) => r.record.status).join(" and ");
    const seconds = ((performance.now() - t0) / 1000).toFixed(2);
    console.log(
      `Map and Parallel of ${n.toLocaleString("en")} at once: ${statuses} in ${seconds} s`,
    );
  }
  await create("small", onePass);
  const after = await post("/v1/state-machines/small/executions?wait=20", { input: { ok: 1 } });
  console.log(`a small execution afterwards: ${after.body.status}`);
} finally {
  clearInterval(monitor);
  const alive = serve.exitCode === null && serve.pid === pid;
  console.log(
    `/health: ${health.ok} answers 200, ${health.other.length} other (${[...new Set(health.other)].join("; ") || "none"}); ` +
      `latency p50 ${pct(health.ms, 50).toFixed(0)} ms, p99 ${pct(health.ms, 99).toFixed(0)} ms, max ${Math.max(...health.ms).toFixed(0)} ms`,
  );
  console.log(`serve: ${alive ? `the same process throughout (pid ${pid})` : "exited"}`);
  if (serveErrors.includes("Maximum call stack size exceeded")) console.log(serveErrors);
  serve.kill("SIGTERM");
  await new Promise((r) => (serve.exitCode === null ? serve.once("exit", r) : r(null)));
  await deleteKeys(REDIS_URL, prefix);
}
