import { spawn } from "node:child_process";
import { accessSync, constants, mkdirSync, readFileSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { pingRedis } from "./redis-connection.js";

/**
 * The zero-setup Redis of `stepwise serve`: when no REDIS_URL is set and nothing
 * answers at the default address, a private `redis-server` child keeps its data
 * (AOF, so executions survive a restart of the service) in `.stepwise/redis/`.
 */

export const HOW_TO_GET_REDIS =
  "install redis-server (Debian/Ubuntu: sudo apt install redis-server; macOS: brew install redis; " +
  "Docker: docker run -d -p 6379:6379 redis:7) or set REDIS_URL=redis://host:port";

/** The first executable `name` on `path` (a PATH value), if any. */
export function findExecutable(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The command line of the private Redis: loopback only, AOF on (fsync every second,
 * as docker-compose's Redis), no RDB snapshots on top of it, a log file beside the
 * data instead of our terminal.
 */
export function redisServerArgs(port: number, dir: string): string[] {
  return [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--appendonly",
    "yes",
    "--appendfsync",
    "everysec",
    "--save",
    "",
    "--logfile",
    join(dir, "redis.log"),
    "--daemonize",
    "no",
  ];
}

export interface LocalRedis {
  url: string;
  pid: number;
  dir: string;
  /** SIGTERM (Redis flushes its AOF and exits), SIGKILL after 10 s. */
  stop(): Promise<void>;
}

export async function startLocalRedis(options: {
  binary: string;
  port: number;
  dir: string;
  readyTimeoutMs?: number;
}): Promise<LocalRedis> {
  const { binary, port, dir } = options;
  mkdirSync(dir, { recursive: true });
  // Its own process group: Ctrl-C reaches only the service, which stops Redis
  // last, after the worker has finished the jobs it holds.
  const child = spawn(binary, redisServerArgs(port, dir), { detached: true, stdio: "ignore" });
  let failure: string | undefined;
  child.once("error", (err) => (failure = `cannot run ${binary}: ${err.message}`));
  child.once("exit", (code, signal) => {
    failure ??= `redis-server exited (${signal ?? `code ${code}`}): ${lastLogLine(dir)}`;
  });
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 5000);
  for (;;) {
    if (failure !== undefined) throw new Error(failure);
    if ((await pingRedis(url, 500)) === undefined) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(
        `redis-server did not answer at ${url} within 5 s; see ${join(dir, "redis.log")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const pid = child.pid!;
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  // A last resort for an exit that skips stop(): never leave a private Redis behind.
  const onExit = (): void => {
    if (alive()) child.kill("SIGTERM");
  };
  process.once("exit", onExit);
  return {
    url,
    pid,
    dir,
    async stop() {
      process.off("exit", onExit);
      if (!alive()) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function lastLogLine(dir: string): string {
  try {
    const lines = readFileSync(join(dir, "redis.log"), "utf8").trim().split("\n");
    return lines.at(-1)?.replace(/^\d+:[A-Z] [^*#.-]*[*#.-] /, "") ?? "no log";
  } catch {
    return "no log";
  }
}
