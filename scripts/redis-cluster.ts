// A local Redis Cluster of 3 masters (no replicas, nothing on disk), for the cluster
// test and the sharding bench, or to try STEPWISE_REDIS_CLUSTER by hand:
//   npx tsx scripts/redis-cluster.ts   (prints the nodes; Ctrl-C stops it)
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { freePort } from "./free-port.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export interface LocalCluster {
  /** `127.0.0.1:<port>` of each master: what STEPWISE_REDIS_CLUSTER takes. */
  nodes: string[];
  stop(): Promise<void>;
}

/** Whether this machine can make one: `redis-cli --cluster` came with Redis 5. */
export function canStartCluster(): boolean {
  try {
    const version = execFileSync("redis-server", ["--version"], { encoding: "utf8" });
    return Number(/v=(\d+)\./.exec(version)?.[1] ?? 0) >= 5;
  } catch {
    return false;
  }
}

export async function startCluster(masters = 3): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), "stepwise-cluster-"));
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) ports.push(await freePort());
  const procs: ChildProcess[] = ports.map((port) =>
    spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        join(dir, `nodes-${port}.conf`),
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "no",
      ],
      { stdio: "ignore" },
    ),
  );
  const stop = async (): Promise<void> => {
    for (const proc of procs) proc.kill("SIGKILL");
    await Promise.all(
      procs.map((proc) =>
        proc.exitCode !== null || proc.signalCode !== null
          ? undefined
          : new Promise((resolve) => proc.once("exit", resolve)),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const nodes = ports.map((port) => `127.0.0.1:${port}`);
    for (const port of ports) await until(port, async (r) => (await r.ping()) === "PONG");
    execFileSync(
      "redis-cli",
      ["--cluster", "create", ...nodes, "--cluster-replicas", "0", "--cluster-yes"],
      { stdio: "ignore" },
    );
    for (const port of ports)
      await until(port, async (r) => /cluster_state:ok/.test(await r.cluster("INFO")));
    return { nodes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function until(port: number, check: (redis: Redis) => Promise<boolean>): Promise<void> {
  const redis = new Redis({ host: "127.0.0.1", port, lazyConnect: true, retryStrategy: () => 50 });
  redis.on("error", () => {});
  try {
    const deadline = Date.now() + 20_000;
    while (!(await check(redis).catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not come up`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    redis.disconnect();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cluster = await startCluster();
  console.log(`STEPWISE_REDIS_CLUSTER=${cluster.nodes.join(",")}`);
  process.on("SIGINT", () => void cluster.stop().then(() => process.exit(0)));
}
