import { Cluster, Redis, type RedisOptions } from "ioredis";
import { logConnectionErrors } from "./connection-errors.js";
import { claimActivityTask } from "./scripts/claim-activity-task.js";
import { claimDue } from "./scripts/claim-due.js";
import { commitTransition } from "./scripts/commit-transition.js";
import { completeTask } from "./scripts/complete-task.js";
import { giveUp } from "./scripts/give-up.js";
import { indexStatuses } from "./scripts/index-statuses.js";
import { decideApproval } from "./scripts/decide-approval.js";
import { loadTransition } from "./scripts/load-transition.js";
import { parkPaused, pauseExecution, resumeExecution } from "./scripts/pause-execution.js";
import { pruneIndex } from "./scripts/prune-index.js";
import { purgeExecution } from "./scripts/purge-execution.js";
import { redriveExecution } from "./scripts/redrive-execution.js";
import { requestStop } from "./scripts/request-stop.js";
import type { AnyScript, Reply, Script } from "./scripts/spec.js";
import { startExecution } from "./scripts/start-execution.js";
import { taskCallClaim } from "./scripts/task-call-claim.js";
import { decodeReply, encodeArgs } from "./wire.js";

/** Every Lua script of the runtime, registered on each connection (EVALSHA). */
const SCRIPTS: readonly AnyScript[] = [
  commitTransition,
  loadTransition,
  startExecution,
  claimDue,
  completeTask,
  claimActivityTask,
  requestStop,
  pruneIndex,
  giveUp,
  indexStatuses,
  decideApproval,
  pauseExecution,
  resumeExecution,
  parkPaused,
  purgeExecution,
  redriveExecution,
  taskCallClaim,
];

/**
 * A Redis connection with the runtime's scripts. `maxRetriesPerRequest: null`
 * makes commands wait through a Redis restart instead of failing (BullMQ needs
 * the same); auto-pipelining batches the many small commands of concurrent jobs.
 */
export class RedisClient {
  readonly redis: Redis;

  constructor(target: RedisTarget | string, options: { name?: string } = {}) {
    this.redis = openRedis(target, options.name ?? "stepwise", { enableAutoPipelining: true });
    // Connection errors are retried (retryStrategy); commands wait meanwhile.
    logConnectionErrors(this.redis, options.name ?? "stepwise");
    for (const script of SCRIPTS) define(this.redis, script);
  }

  /**
   * Runs a script with its keys by name and its one argument (wire.ts), and
   * returns its reply, checked to be one of the kinds the script declares.
   *
   * However much a call carries (a commit's children, history events, kept
   * inputs), it is one argument: spreading tens of thousands of arguments into a
   * call once overflowed the stack inside ioredis's auto-pipeline, which then
   * threw from a callback and took the process down (issue 20).
   */
  async call<K extends string, A, R extends Reply>(
    script: Script<K, A, R>,
    keys: Record<K, string>,
    args: A,
  ): Promise<R> {
    const fn = (
      this.redis as unknown as Record<string, (k: string[], a: Buffer[]) => Promise<Buffer>>
    )[`${script.name}Buffer`];
    if (!fn) throw new Error(`script ${script.name} is not registered`);
    const raw = await fn.call(
      this.redis,
      script.keys.map((name) => keys[name]),
      [encodeArgs(args)],
    );
    const reply = decodeReply(raw) as R;
    if (!script.replies.includes(reply?.kind)) {
      throw new Error(`script ${script.name} replied ${JSON.stringify(reply?.kind)}`);
    }
    return reply;
  }

  async close(): Promise<void> {
    // QUIT would wait in the offline queue of a connection that never came up.
    if (this.redis.status !== "ready") {
      this.redis.disconnect();
      return;
    }
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}

function define(redis: Redis, script: AnyScript): void {
  redis.defineCommand(script.name, { numberOfKeys: script.keys.length, lua: script.lua });
}

/** A separate connection for BullMQ (blocking commands must not share ours). */
export function bullConnection(target: RedisTarget | string, name: string): Redis {
  const redis = openRedis(target, name);
  logConnectionErrors(redis, name);
  return redis;
}

/**
 * Where Redis is: one server (`REDIS_URL`), or a Redis Cluster
 * (`STEPWISE_REDIS_CLUSTER=host:port,…`, reached through ioredis's Cluster client).
 * Keys are laid out for a cluster either way (keys.ts), so there is one code path.
 */
export interface RedisTarget {
  redisUrl: string;
  redisCluster?: readonly string[] | undefined;
}

/**
 * A connection to the target. Commands wait through a restart or a failover
 * (`maxRetriesPerRequest: null`, as BullMQ needs). A Cluster client answers the
 * commands the runtime uses as a single connection does (each script and each
 * pipeline stays in one slot), so it is typed as one.
 */
export function openRedis(
  where: RedisTarget | string,
  name: string,
  options: RedisOptions = {},
): Redis {
  const target = typeof where === "string" ? { redisUrl: where } : where;
  const common: RedisOptions = {
    maxRetriesPerRequest: null,
    connectionName: name,
    retryStrategy: (times) => Math.min(50 * times, 1000),
    ...options,
  };
  if (!target.redisCluster || target.redisCluster.length === 0) {
    return new Redis(target.redisUrl, common);
  }
  const { enableAutoPipelining, ...perNode } = common;
  const cluster = new Cluster(target.redisCluster.map(clusterNode), {
    redisOptions: perNode,
    enableAutoPipelining: enableAutoPipelining ?? false,
    // Commands wait while a slot's master fails over, as they wait through a restart.
    clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
    retryDelayOnClusterDown: 300,
    retryDelayOnFailover: 200,
  });
  return cluster as unknown as Redis;
}

/** `host:port` (or `[v6]:port`) of `STEPWISE_REDIS_CLUSTER`. */
function clusterNode(spec: string): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(spec.trim());
  if (!match) throw new Error(`STEPWISE_REDIS_CLUSTER: '${spec}' is not host:port`);
  return { host: match[1]!, port: Number(match[2]) };
}
