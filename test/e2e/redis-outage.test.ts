import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findExecutable, startLocalRedis, type LocalRedis } from "../../cli/local-redis.js";
import { exited, freePort, logLine, spawnBin, testPrefix, type Spawned } from "./processes.js";

/**
 * Issue 44, finding 8: Redis goes away with the service (`docker compose down` stops
 * both). SIGTERM must still end the process within STEPWISE_SHUTDOWN_SECONDS, and the
 * outage must be told in a few lines, not one per failed attempt of every poller.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function ownRedis(): Promise<LocalRedis> {
  const dir = mkdtempSync(join(tmpdir(), "stepwise-outage-"));
  dirs.push(dir);
  return startLocalRedis({
    binary: findExecutable("redis-server", process.env.PATH)!,
    port: await freePort(),
    dir,
  });
}

async function outage(
  command: "serve" | "worker",
): Promise<{ code: number | null; output: string; ms: number }> {
  const redis = await ownRedis();
  const service: Spawned = spawnBin([command], {
    env: {
      REDIS_URL: redis.url,
      STEPWISE_PREFIX: testPrefix("outage"),
      PORT: "0",
      STEPWISE_SHUTDOWN_SECONDS: "3",
    },
  });
  await logLine(service, command === "serve" ? /ready: API / : /worker ready/);
  await redis.stop();
  // The pollers fail for a while, as they would in an outage.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const signalled = Date.now();
  service.child.kill("SIGTERM");
  const code = await exited(service.child, 15_000);
  return { code, output: service.output(), ms: Date.now() - signalled };
}

describe.each(["serve", "worker"] as const)("stepwise %s when Redis is gone", (command) => {
  it("exits within STEPWISE_SHUTDOWN_SECONDS of SIGTERM and tells the outage in a few lines", async () => {
    const { code, output, ms } = await outage(command);
    expect(ms).toBeLessThan(10_000);
    expect([0, 1]).toContain(code);
    if (code === 1) expect(output).toContain("shutdown did not finish within 3 s");
    const lines = output
      .split("\n")
      .filter((line) => /ECONNREFUSED|Connection is closed/.test(line));
    expect(lines.length, lines.slice(0, 5).join("\n")).toBeLessThan(20);
    expect(output).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/); // no stack traces
  }, 30_000);
});
