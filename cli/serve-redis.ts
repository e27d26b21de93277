import { resolve } from "node:path";
import {
  findExecutable,
  HOW_TO_GET_REDIS,
  startLocalRedis,
  type LocalRedis,
} from "./local-redis.js";
import { pingRedis } from "./redis-connection.js";

/**
 * Which Redis `stepwise serve` uses:
 * - REDIS_URL when set (the caller then waits for it, see waitForRedis);
 * - else the default address 127.0.0.1:<STEPWISE_LOCAL_REDIS_PORT, 6379> when
 *   something answers there;
 * - else a private redis-server it starts on that address, data in ./.stepwise/redis.
 */
export type RedisChoice =
  | { source: "REDIS_URL"; url: string }
  | { source: "default"; url: string }
  | { source: "private"; url: string; local: LocalRedis }
  | { source: "none"; message: string };

/**
 * With `STEPWISE_REDIS_CLUSTER`, the first seed node is what startup waits for and
 * `/health` probes (the runtime itself connects through the Cluster client).
 */
export function clusterSeedUrl(cluster: readonly string[] | undefined): string | undefined {
  const seed = cluster?.[0];
  return seed ? `redis://${seed}` : undefined;
}

export async function chooseRedis(options: {
  redisUrl: string | undefined;
  localPort: number;
  path: string | undefined;
  dataDir?: string;
}): Promise<RedisChoice> {
  if (options.redisUrl !== undefined && options.redisUrl !== "") {
    return { source: "REDIS_URL", url: options.redisUrl };
  }
  const url = `redis://127.0.0.1:${options.localPort}`;
  const silence = await pingRedis(url, 1000);
  if (silence === undefined) return { source: "default", url };
  const binary = findExecutable("redis-server", options.path);
  if (binary === undefined) {
    return {
      source: "none",
      message: `no Redis answers at ${url} (${silence}) and redis-server is not on PATH: ${HOW_TO_GET_REDIS}`,
    };
  }
  const dir = options.dataDir ?? resolve(".stepwise", "redis");
  try {
    const local = await startLocalRedis({ binary, port: options.localPort, dir });
    return { source: "private", url: local.url, local };
  } catch (err) {
    return {
      source: "none",
      message: `no Redis answers at ${url} (${silence}) and a private redis-server could not start: ${(err as Error).message}; or set REDIS_URL=redis://host:port`,
    };
  }
}
