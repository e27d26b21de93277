import { randomBytes } from "node:crypto";
import { spawn, type ChildProcess } from "node:child_process";
import { freePort } from "../../scripts/free-port.js";
export { freePort };
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * `stepwise <command>` as a real process, through bin/stepwise.js as `npx stepwise`
 * runs it, in any working directory, with its output collected.
 */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Every product process a test file spawned is killed when the file's process
 * exits, however it ends: a failed beforeAll never reaches the afterAll that would
 * have stopped it, and an orphaned service would hold its port and Redis.
 */
const spawnedChildren = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of spawnedChildren) if (child.exitCode === null) child.kill("SIGKILL");
});
function track(child: ChildProcess): ChildProcess {
  spawnedChildren.add(child);
  child.once("exit", () => spawnedChildren.delete(child));
  return child;
}

/** `bin/stepwise.js`, as `npx stepwise` runs it: the compiled dist/ (test/global-build.ts keeps it current). */
export const BIN = join(ROOT, "bin/stepwise.js");

export interface Spawned {
  child: ChildProcess;
  output: () => string;
}

export function spawnStepwise(
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; replaceEnv?: boolean } = {},
): Spawned {
  const base = options.replaceEnv ? {} : process.env;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...base, ...options.env })) if (v !== undefined) env[k] = v;
  // The suite may run under `npm test`; the product would take npm's marker for npx's.
  if (options.env?.npm_command === undefined) delete env.npm_command;
  const child = track(
    spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  return { child, output: () => output };
}

/**
 * The environment a product process gets in a test: only what a user's shell would
 * pass through (PATH, HOME, the temp dir) plus what the test sets, so nothing of the
 * developer's own STEPWISE_* settings leaks in.
 */
export function userEnv(env: Record<string, string | undefined> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "TMPDIR", "LANG", "TZ"]) {
    const value = process.env[name];
    if (value !== undefined) out[name] = value;
  }
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** `stepwise <args>` through bin/stepwise.js, as a user starts it, with its output collected. */
export function spawnBin(
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; nodeArgs?: string[] } = {},
): Spawned {
  const child = track(
    spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: userEnv(options.env),
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  return { child, output: () => output };
}

/**
 * Waits for the JSON log line whose `msg` matches `pattern`; rejects with the
 * process's output when it exits first or `ms` passes.
 */
export function logLine(
  spawned: Spawned,
  pattern: RegExp,
  ms = 30_000,
): Promise<{ level: number; msg: string; [k: string]: unknown }> {
  return new Promise((resolve, reject) => {
    const look = (): boolean => {
      const line = logLines(spawned.output()).find((l) => pattern.test(l.msg));
      if (line) {
        finish();
        resolve(line);
      }
      return line !== undefined;
    };
    const onExit = (code: number | null, signal: string | null): void => {
      if (look()) return;
      finish();
      reject(
        new Error(`exited (${signal ?? code}) before logging ${pattern}:\n${spawned.output()}`),
      );
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`no log line ${pattern} within ${ms} ms:\n${spawned.output()}`));
    }, ms);
    const poll = setInterval(look, 25);
    const finish = (): void => {
      clearTimeout(timer);
      clearInterval(poll);
      spawned.child.off("exit", onExit);
    };
    spawned.child.on("exit", onExit);
    look();
  });
}

/** Polls `check` until it gives a value (errors count as "not yet"). */
export async function until<T>(check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The exit code of `child` once it exits. A process that has not exited within
 * `ms` rejects, naming its pid, so a hung shutdown fails as that and not as a
 * test timeout that could be anything.
 */
export function exited(child: ChildProcess, ms = 30_000): Promise<number | null> {
  // Ended already: by itself (exitCode) or by a signal (signalCode, exitCode stays null).
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`process ${child.pid} did not exit within ${ms / 1000} s`)),
      ms,
    );
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** The JSON log lines (pino) in a process's output; other lines are left out. */
export function logLines(output: string): { level: number; msg: string; [k: string]: unknown }[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .flatMap((line) => {
      // The last line may still be being written.
      try {
        return [JSON.parse(line) as { level: number; msg: string; [k: string]: unknown }];
      } catch {
        return [];
      }
    });
}

/** Whether a process with this pid is alive (signal 0 only checks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function testPrefix(name: string): string {
  return `stepwise-e2e-${name}-${randomBytes(4).toString("hex")}`;
}
