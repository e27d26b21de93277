import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findExecutable, HOW_TO_GET_REDIS, startLocalRedis } from "../cli/local-redis.js";
import { pingRedis } from "../cli/redis-connection.js";
import { freePort } from "./e2e/processes.js";

/**
 * vitest global setup: the suite's Redis. REDIS_URL when set; else the Redis at
 * 127.0.0.1:6379 (STEPWISE_LOCAL_REDIS_PORT) when one answers; else, as `stepwise serve` does, a private
 * redis-server (on a free port, data in a temporary directory) for the whole run.
 * Test files read REDIS_URL, which their worker processes inherit from here.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.REDIS_URL) return undefined;
  const fallback = `redis://127.0.0.1:${process.env.STEPWISE_LOCAL_REDIS_PORT ?? 6379}`;
  const silence = await pingRedis(fallback, 1000);
  if (silence === undefined) return undefined;
  const binary = findExecutable("redis-server", process.env.PATH);
  if (binary === undefined) {
    throw new Error(
      `the tests need Redis: none answers at ${fallback} (${silence}) and redis-server is not on PATH: ${HOW_TO_GET_REDIS}`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "stepwise-test-redis-"));
  const local = await startLocalRedis({ binary, port: await freePort(), dir });
  process.env.REDIS_URL = local.url;
  console.log(`tests: no Redis at ${fallback}; using a private redis-server at ${local.url}`);
  return async () => {
    await local.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
