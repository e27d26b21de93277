import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { REDIS_URL } from "./stack.js";

/**
 * `stepwise serve` (or `worker`) as a real process of its own, for tests that
 * must see what a deployment sees: one process whose pid survives or not, its
 * log, its exit code.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));

export interface ServeProcess {
  child: ChildProcess;
  output: () => string;
}

export function spawnStepwise(
  env: Record<string, string>,
  args: string[] = [],
  command: "serve" | "worker" = "serve",
): ServeProcess {
  const script = `
    import { main } from "./cli/main.ts";
    const io = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };
    process.exitCode = await main(${JSON.stringify([command, ...args])}, io);`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  return { child, output: () => output };
}

export function testPrefix(name: string): string {
  return `stepwise-e2e-${name}-${randomBytes(4).toString("hex")}`;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

/** Polls `check` until it returns a value (errors count as "not yet"). */
export async function until<T>(check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** Removes every key of a prefix (SCAN, never KEYS). */
export async function deletePrefix(prefix: string, redisUrl = REDIS_URL): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}
