/**
 * How long the `stepwise` binary takes as whole processes, spawn to exit: `--help`,
 * `validate` of one file, and `stepwise test` of a 60-case workload
 * (bench/cli-test-workload/: three machines with Choice, Pass, Map, Parallel, Wait and
 * Task states, mocked results, Retry and Catch; cases.jsonl, made by generate.ts).
 *
 * The anchor runs the same 60 cases on aws-local-stepfunctions 3.0.0 through its JS
 * API (local-sfn-runner.mjs: mocks as `taskResourceLocalHandlers`, waits and retry
 * intervals overridden to 0, results checked), as whole processes too, in two forms:
 *  - one process for all 60 cases: its fastest form, what the headline ratio uses;
 *  - one process per machine (3), as `local-sfn -f machine.json input...` would run.
 * Its CLI's mocking (`local-sfn -t State:./program`) starts a program for every mocked
 * Task call, and a case's sequence of responses (a Retry's attempts) would need that
 * program to keep state between calls: slower, and not the same test, so the JS API
 * (each definition validated once, like `stepwise test`) is the fair fastest form.
 * `--per-case` adds a third: one process per case (60), as a loop over its CLI would.
 * It declares node >= 22, so it is not in package.json: it is installed on demand
 * into <tmpdir>/stepwise-bench-anchors (it runs on Node 20 with the runner's one
 * polyfill).
 *
 * Timings are noisy on a shared machine: --help and validate are interleaved (10
 * each), `stepwise test` and the anchor forms are interleaved round by round (5), and
 * each prints min/median/max of the wall time, and (on Linux) the median CPU time
 * (user + system, from /proc/self/stat's reaped-children fields, 10 ms ticks), which
 * other processes on the machine disturb much less. Build first (npm run build): this
 * runs dist/.
 *
 * `validate`, `run` and `test` compile their bundle through V8's code cache
 * (cli/compile-cache.ts, under the temporary directory), which the first run of each
 * writes: the warm-up runs below write it. The "first run" row (interleaved with the
 * others) gives each run an empty temporary directory (TMPDIR): it compiles without a
 * cache and writes one, as the first run after an install or upgrade does.
 *
 *   npx tsx bench/cli-start.ts [--per-case]
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "bin", "stepwise.js");
const WORKLOAD = join(ROOT, "bench", "cli-test-workload");
const CASES = join(WORKLOAD, "cases.jsonl");
const RUNNER = join(WORKLOAD, "local-sfn-runner.mjs");
const ANCHOR_VERSION = "3.0.0";
const START_RUNS = 10;
const TEST_ROUNDS = 5;

/** Installs aws-local-stepfunctions outside the repository once; returns its ESM build. */
function installAnchor(): string {
  const prefix = join(tmpdir(), "stepwise-bench-anchors");
  const pkg = join(prefix, "node_modules", "aws-local-stepfunctions");
  const installed = existsSync(join(pkg, "package.json"))
    ? (JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version: string }).version
    : undefined;
  if (installed !== ANCHOR_VERSION) {
    console.log(`installing aws-local-stepfunctions@${ANCHOR_VERSION} into ${prefix} …`);
    execFileSync(
      "npm",
      [
        "install",
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--prefix",
        prefix,
        `aws-local-stepfunctions@${ANCHOR_VERSION}`,
      ],
      { stdio: "inherit" },
    );
  }
  return join(pkg, "build", "main.node.esm.js");
}

// A NODE_OPTIONS inherited from a loader (tsx) would slow every child alike and hide
// what the binaries cost on their own.
const env = { ...process.env };
delete env.NODE_OPTIONS;

/** CPU time (user + system) of the children this process has reaped, in ms; 0 off Linux. */
function childrenCpu(): number {
  try {
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
    // cutime and cstime (fields 16 and 17 of proc(5)), in clock ticks of 10 ms.
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}

/** Wall times (spawn to exit) and CPU times of the processes measured, per row. */
const wall = new Map<string, number[]>();
const cpu = new Map<string, number[]>();

/** Runs one process into `row`; throws unless it exits 0 and prints `expect`. */
function timed(
  row: string | undefined,
  args: string[],
  expect?: string,
  extraEnv: Record<string, string> = {},
): void {
  const cpuBefore = childrenCpu();
  const start = performance.now();
  const r = spawnSync(process.execPath, args, {
    env: { ...env, ...extraEnv },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ms = performance.now() - start;
  if (r.status !== 0 || (expect !== undefined && !r.stdout.includes(expect))) {
    throw new Error(`${args.join(" ")} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  }
  if (row === undefined) return;
  wall.set(row, [...(wall.get(row) ?? []), ms]);
  cpu.set(row, [...(cpu.get(row) ?? []), childrenCpu() - cpuBefore]);
}

function stats(ms: number[]): { min: number; median: number; max: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: sorted[0]!, median, max: sorted.at(-1)! };
}

const f = (ms: number): string => (ms / 1000).toFixed(3);

function line(row: string): string {
  const s = stats(wall.get(row)!);
  const c = stats(cpu.get(row)!);
  return (
    `${row.padEnd(50)} min ${f(s.min)} s  median ${f(s.median)} s  max ${f(s.max)} s` +
    `  (n=${wall.get(row)!.length})  CPU median ${f(c.median)} s`
  );
}

/** How many times the anchor's time is ours, by median wall, min wall and median CPU. */
function ratio(anchorRow: string, ours: string): string {
  const x = (a: number, b: number): string => `${(a / b).toFixed(1)}×`;
  const [a, s] = [stats(wall.get(anchorRow)!), stats(wall.get(ours)!)];
  const [ac, sc] = [stats(cpu.get(anchorRow)!), stats(cpu.get(ours)!)];
  return `${x(a.median, s.median)} (median wall), ${x(a.min, s.min)} (min wall), ${x(ac.median, sc.median)} (median CPU)`;
}

const perCase = process.argv.includes("--per-case");
const anchor = installAnchor();
const cases = readFileSync(CASES, "utf8")
  .split("\n")
  .filter((l) => l.trim());
if (cases.length !== 60) throw new Error(`${CASES}: ${cases.length} cases, expected 60`);
const ALL = `${cases.length} passed, 0 failed`;
const byMachine = new Map<string, string[]>();
cases.forEach((text, i) => {
  const file = (JSON.parse(text) as { definition: string }).definition;
  byMachine.set(file, [...(byMachine.get(file) ?? []), String(i)]);
});

console.log(`node ${process.version}, ${cases.length} cases over ${byMachine.size} machines`);

// Warm the file system cache and write the code cache (and surface a broken build)
// before measuring.
timed(undefined, [BIN, "--help"]);
timed(undefined, [BIN, "validate", join(WORKLOAD, "order.asl.json")], "valid");
timed(undefined, [BIN, "test", CASES], ALL);
timed(undefined, [RUNNER, anchor, CASES], ALL);

const FLOOR = "node -e '' (the floor)";
const HELP = "stepwise --help                  (target < 0.3 s)";
const VALIDATE = "stepwise validate order.asl.json (target < 0.5 s)";
for (let i = 0; i < START_RUNS; i++) {
  timed(FLOOR, ["-e", ""]);
  timed(HELP, [BIN, "--help"]);
  timed(VALIDATE, [BIN, "validate", join(WORKLOAD, "order.asl.json")], "valid");
}
for (const row of [FLOOR, HELP, VALIDATE]) console.log(line(row));

const TEST = "stepwise test (60 cases, 1 process)";
const COLD = "stepwise test, first run (no code cache yet)";
const ONE = "aws-local-stepfunctions, 1 process";
const MACHINES = `aws-local-stepfunctions, ${byMachine.size} processes (per machine)`;
for (let round = 0; round < TEST_ROUNDS; round++) {
  timed(TEST, [BIN, "test", CASES], ALL);
  const emptyTmp = mkdtempSync(join(tmpdir(), "stepwise-bench-cold-"));
  timed(COLD, [BIN, "test", CASES], ALL, { TMPDIR: emptyTmp });
  rmSync(emptyTmp, { recursive: true, force: true });
  timed(ONE, [RUNNER, anchor, CASES], ALL);
  // The per-machine form's time is the sum of its processes': one row entry per round.
  const [w, c] = [wall.get(MACHINES) ?? [], cpu.get(MACHINES) ?? []];
  for (const indices of byMachine.values()) {
    timed(MACHINES, [RUNNER, anchor, CASES, ...indices], `${indices.length} passed, 0 failed`);
  }
  const parts = byMachine.size;
  wall.set(MACHINES, [
    ...w,
    wall
      .get(MACHINES)!
      .slice(-parts)
      .reduce((a, b) => a + b),
  ]);
  cpu.set(MACHINES, [
    ...c,
    cpu
      .get(MACHINES)!
      .slice(-parts)
      .reduce((a, b) => a + b),
  ]);
}
for (const row of [TEST, COLD, ONE, MACHINES]) console.log(line(row));
console.log(`ratio vs 1 process:             ${ratio(ONE, TEST)}   (target ≥ 10×)`);
console.log(`ratio vs per-machine processes: ${ratio(MACHINES, TEST)}`);
console.log(`ratio vs 1 process, first run:  ${ratio(ONE, COLD)}`);

if (perCase) {
  // 60 processes a round, so one round (a minute or more).
  const PER_CASE = "aws-local-stepfunctions, 60 processes (per case)";
  cases.forEach((_, i) =>
    timed(PER_CASE, [RUNNER, anchor, CASES, String(i)], "1 passed, 0 failed"),
  );
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b);
  wall.set(PER_CASE, [sum(wall.get(PER_CASE)!)]);
  cpu.set(PER_CASE, [sum(cpu.get(PER_CASE)!)]);
  console.log(line(PER_CASE));
  console.log(`ratio vs per-case processes:    ${ratio(PER_CASE, TEST)}`);
}
