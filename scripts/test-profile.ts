// Where the suite's time goes: `npx tsx scripts/test-profile.ts [vitest args]` runs
// `vitest run` with its default output, then prints each test file's wall time (slowest
// first), the number of tests, and the run's wall time; it exits with vitest's code.
//
// The file is also the vitest reporter that measures (vitest loads it by path). The
// JSON reporter's per-file startTime/endTime are not enough: they run from the first
// test's start to the last test's end, so a file's imports and its beforeAll — where
// the end-to-end files start their processes — would not count.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Reporter, TestModule } from "vitest/node";

const ROOT = resolve(import.meta.dirname, "..");
const SELF = fileURLToPath(import.meta.url);
/** Where the reporter (in vitest's process) leaves its figures for the script. */
const OUT = "STEPWISE_TEST_PROFILE_OUT";
/** Where each test file's process appends the CPU it and its children used (test/cpu-profile.ts). */
const CPU_OUT = "STEPWISE_TEST_PROFILE_CPU";

interface FileTime {
  file: string;
  /** Environment, runner setup, imports and suite collection, then tests and all hooks. */
  ms: number;
  tests: number;
  failed: number;
  skipped: number;
}

export default class ProfileReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const out = process.env[OUT];
    if (out === undefined) return;
    const files = testModules.map((m): FileTime => {
      const d = m.diagnostic();
      const tests = [...m.children.allTests()];
      return {
        file: relative(ROOT, m.moduleId),
        ms:
          d.environmentSetupDuration +
          d.prepareDuration +
          d.collectDuration +
          d.setupDuration +
          d.duration,
        tests: tests.length,
        failed: tests.filter((t) => t.result().state === "failed").length,
        skipped: tests.filter((t) => t.result().state === "skipped").length,
      };
    });
    writeFileSync(out, JSON.stringify(files));
  }
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function main(args: string[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "stepwise-test-profile-"));
  const out = join(dir, "files.json");
  const cpuOut = join(dir, "cpu.jsonl");
  const started = Date.now();
  const vitest = spawn(
    process.execPath,
    [
      join(ROOT, "node_modules/vitest/vitest.mjs"),
      "run",
      "--reporter=default",
      `--reporter=${SELF}`,
      ...args,
    ],
    { cwd: ROOT, env: { ...process.env, [OUT]: out, [CPU_OUT]: cpuOut }, stdio: "inherit" },
  );
  const code = await new Promise<number>((done) =>
    vitest.on("exit", (status, signal) => done(status ?? (signal ? 1 : 0))),
  );
  const wall = Date.now() - started;
  let files: FileTime[] = [];
  try {
    files = JSON.parse(readFileSync(out, "utf8")) as FileTime[];
  } catch {
    // vitest stopped before its run ended (a startup error): its own output says why.
  }
  const cpu = new Map<string, { selfMs: number; childrenMs: number }>();
  try {
    for (const line of readFileSync(cpuOut, "utf8").split("\n")) {
      if (line === "") continue;
      const c = JSON.parse(line) as { file: string; selfMs: number; childrenMs: number };
      cpu.set(c.file, c);
    }
  } catch {
    // no /proc here, or no file finished: wall times only
  }
  rmSync(dir, { recursive: true, force: true });
  files.sort((a, b) => b.ms - a.ms);
  const width = Math.max(0, ...files.map((f) => f.file.length));
  const outcome = (f: Pick<FileTime, "failed" | "skipped">): string =>
    (f.failed > 0 ? `, ${f.failed} failed` : "") + (f.skipped > 0 ? `, ${f.skipped} skipped` : "");
  console.log(
    "\nPer test file, slowest first: wall time (imports, hooks and tests); CPU of the file's" +
      "\nprocess (imports included) + CPU of the processes it spawned (binaries, browsers):",
  );
  let cpuSelf = 0;
  let cpuChildren = 0;
  for (const f of files) {
    const name = f.file.padEnd(width);
    const c = cpu.get(f.file);
    const cpuText =
      c === undefined
        ? ""
        : `  cpu ${seconds(c.selfMs).padStart(7)} + ${seconds(c.childrenMs).padStart(7)}`;
    cpuSelf += c?.selfMs ?? 0;
    cpuChildren += c?.childrenMs ?? 0;
    console.log(`  ${seconds(f.ms).padStart(8)}  ${name}${cpuText}  ${f.tests} tests${outcome(f)}`);
  }
  const sum = (key: "tests" | "failed" | "skipped"): number =>
    files.reduce((n, f) => n + f[key], 0);
  const total = `${files.length} files, ${sum("tests")} tests${outcome({ failed: sum("failed"), skipped: sum("skipped") })}`;
  console.log(`\n${total}, ${seconds(wall)} wall time in all.`);
  if (cpu.size > 0) {
    console.log(
      `CPU: ${seconds(cpuSelf)} in test files' processes, ${seconds(cpuChildren)} in what they spawned ` +
        `(Redis and vitest's own process not counted).`,
    );
  }
  return code;
}

// Run as a script, not when vitest imports the reporter.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === SELF) {
  process.exitCode = await main(process.argv.slice(2));
}
