import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { deleteKeys, randomPrefix, REDIS_URL, ROOT } from "./helpers.js";

/**
 * Closing a worker and a runtime releases every socket and timer, so a process
 * that closes them exits on its own (no `process.exit`, no SIGKILL after a grace
 * period).
 */
const prefixes: string[] = [];
afterEach(async () => {
  for (const prefix of prefixes.splice(0)) await deleteKeys(REDIS_URL, prefix);
});

describe("closing", () => {
  it("a process that closes its worker and runtime exits by itself", async () => {
    const prefix = randomPrefix();
    prefixes.push(prefix);
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(ROOT, "test/integration/fixtures/start-and-close.ts")],
      {
        cwd: ROOT,
        env: { ...process.env, REDIS_URL, STEPWISE_PREFIX: prefix },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    // Liveness, not speed: a handle left open keeps the process up forever; the
    // deadline only turns that hang into a readable failure.
    const outcome = await new Promise<string>((resolve) => {
      const deadline = setTimeout(() => {
        child.kill("SIGKILL");
        resolve("still running after close");
      }, 10_000);
      child.once("exit", (code, signal) => {
        clearTimeout(deadline);
        resolve(`exited ${code ?? signal}`);
      });
    });
    expect(outcome, output).toBe("exited 0");
    expect(output).toContain("closed SUCCEEDED");
  }, 20_000);
});
