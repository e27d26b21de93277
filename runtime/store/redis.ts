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
import type { AnyScript, Reply, Script } from "./lua/spec.js";
import { startExecution } from "./scripts/start-execution.js";
import { taskCallClaim } from "./scripts/task-call-claim.js";
import { decodeReply, encodeArgs } from "./wire.js";

/**
 * The scripts of executions and their runs (store/scripts/), registered on each
 * connection (EVALSHA). A script defined elsewhere (a room's own, such as
 * definitions/machine-create.ts) is registered on its first call.
 */
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

/** One script call waiting for its tick's batch (see "Batching" below). */
interface Queued {
  script: AnyScript;
  keys: string[];
  arg: Buffer;
  /** The hash tag of its keys: calls are batched within one Cluster slot only. */
  tag: string;
  resolve: (reply: Buffer) => void;
  reject: (err: unknown) => void;
}

/** Most calls one EVALSHA carries, and most bytes of arguments (past one call). */
const BATCH_CALLS = 64;
const BATCH_BYTES = 1 << 20;

/**
 * A Redis connection with the runtime's scripts. `maxRetriesPerRequest: null`
 * makes commands wait through a Redis restart instead of failing (BullMQ needs
 * the same); auto-pipelining batches the many small commands of concurrent jobs.
 *
 * Batching: the script calls made in one tick leave together at its end, and
 * the calls of the same script (on the same shard) share ONE EVALSHA, each with
 * its own keys, argument and reply (store/lua/prelude.ts `scriptLua`). A burst of fired timers or a wide Map makes
 * dozens of loads and commits per tick; an EVALSHA costs Redis about 20 µs
 * before its body runs and the client one command to build, write and parse,
 * so sharing one is most of what a small transition costs (issue 21). Redis
 * runs the calls back to back as it would run them pipelined, and each answers
 * on its own. Calls made in one tick are concurrent (none waits for another's
 * reply), so their order matters in one case only: the claim sent behind a
 * commit (transition.ts `claimBehind`) must run after it. Each script's group
 * goes at the place of its first call, and the claims' first call always comes
 * after a commit's, so every claim still runs after its commit.
 */
export class RedisClient {
  readonly redis: Redis;
  private queued: Queued[] = [];

  constructor(target: RedisTarget | string, options: { name?: string; failFast?: boolean } = {}) {
    this.redis = openRedis(target, options.name ?? "stepwise", {
      enableAutoPipelining: true,
      // Script calls are batched here already, and sent at once: ioredis's
      // auto-pipeline would hold a batch back while its previous one awaits
      // replies (one in flight per connection), and in a Cluster it would pick
      // the slot from a batch's first argument, its key count.
      autoPipeliningIgnoredCommands: SCRIPTS.map((script) => script.name),
    });
    // Connection errors are retried (retryStrategy); commands wait meanwhile.
    logConnectionErrors(this.redis, options.name ?? "stepwise");
    if (options.failFast) failFastOnceReady(this.redis);
    for (const script of SCRIPTS) this.define(script);
  }

  private readonly defined = new Set<string>();

  private define(script: AnyScript): void {
    if (this.defined.has(script.name)) return;
    this.defined.add(script.name);
    define(this.redis, script);
    const ignored = this.redis.options.autoPipeliningIgnoredCommands;
    if (ignored && !ignored.includes(script.name)) ignored.push(script.name);
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
    const keyList = script.keys.map((name) => keys[name]);
    const arg = encodeArgs(args);
    const raw = await new Promise<Buffer>((resolve, reject) => {
      if (this.queued.length === 0) process.nextTick(() => this.flush());
      this.queued.push({ script, keys: keyList, arg, tag: hashTag(keyList[0]), resolve, reject });
    });
    const reply = decodeReply(raw) as R;
    if (!script.replies.includes(reply?.kind)) {
      throw new Error(`script ${script.name} replied ${JSON.stringify(reply?.kind)}`);
    }
    return reply;
  }

  /**
   * Sends this tick's calls, grouped by script and shard, each group at the
   * place of its first call, in EVALSHAs of at most `BATCH_CALLS` calls.
   */
  private flush(): void {
    const groups = new Map<string, Queued[]>();
    for (const call of this.queued) {
      const id = `${call.script.name} ${call.tag}`;
      const group = groups.get(id);
      if (group) group.push(call);
      else groups.set(id, [call]);
    }
    this.queued = [];
    // One write for the tick: each EVALSHA would otherwise be a socket write of its
    // own, and with a shard's group apiece, writes were a sixth of a serving
    // process's CPU (bench/rest-starts.ts). A Cluster client has no one stream.
    const stream = groups.size > 1 ? corkable(this.redis) : undefined;
    stream?.cork();
    for (const group of groups.values()) {
      for (let i = 0; i < group.length;) {
        let end = i + 1;
        let bytes = group[i]!.arg.length;
        while (end < group.length && end - i < BATCH_CALLS) {
          if ((bytes += group[end]!.arg.length) > BATCH_BYTES) break;
          end++;
        }
        this.send(group.slice(i, end));
        i = end;
      }
    }
    stream?.uncork();
  }

  private send(batch: Queued[]): void {
    const { script } = batch[0]!;
    this.define(script);
    const fn = (this.redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[
      `${script.name}Buffer`
    ];
    if (!fn) {
      for (const c of batch) c.reject(new Error(`script ${script.name} is not registered`));
      return;
    }
    fn.call(
      this.redis,
      batch.length * script.keys.length,
      batch.flatMap((c) => c.keys),
      batch.map((c) => c.arg),
    ).then(
      (replies) => {
        const list = replies as (Buffer | Error | null)[];
        batch.forEach((c, i) => {
          const reply = list[i];
          if (reply instanceof Error) c.reject(reply);
          else if (!reply) c.reject(new Error(`script ${script.name} gave no reply`));
          else c.resolve(reply);
        });
      },
      (err: unknown) => {
        for (const c of batch) c.reject(err);
      },
    );
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

/** The socket of a connected single-server client, to cork a burst of writes into one. */
function corkable(redis: Redis): { cork(): void; uncork(): void } | undefined {
  const stream = (redis as unknown as { stream?: { cork?(): void; uncork?(): void } }).stream;
  return redis.status === "ready" && stream?.cork && stream.uncork
    ? (stream as { cork(): void; uncork(): void })
    : undefined;
}

/** Registered without a key count: a batch's count is its calls' keys together. */
function define(redis: Redis, script: AnyScript): void {
  redis.defineCommand(script.name, { lua: script.lua });
}

/** The `{…}` of a key (keys.ts): what Redis Cluster hashes. */
function hashTag(key: string | undefined): string {
  if (!key) return "";
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** A separate connection for BullMQ (blocking commands must not share ours). */
export function bullConnection(
  target: RedisTarget | string,
  name: string,
  options: { failFast?: boolean } = {},
): Redis {
  const redis = openRedis(target, name);
  if (options.failFast) failFastOnceReady(redis);
  logConnectionErrors(redis, name);
  return redis;
}

/**
 * For a process that answers requests (the API): while Redis cannot be reached, a
 * command (queued, or in flight when the connection dropped) fails after two
 * reconnect attempts, a fraction of a second, instead of waiting for Redis to come
 * back (the API answers 503 then, api/server.ts). Only once the first connection
 * was ready: a service started before its Redis answers waits for it as ever.
 * Workers keep waiting: their jobs simply resume.
 */
const FAIL_FAST_RETRIES = 2;

/** Fail fast from the first time the connection is ready (before it, commands wait for it). */
function failFastOnceReady(redis: Redis): Redis {
  redis.once("ready", () => {
    // ioredis reads it when it flushes the commands queued over a lost connection.
    redis.options.maxRetriesPerRequest = FAIL_FAST_RETRIES;
  });
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
  const { enableAutoPipelining, autoPipeliningIgnoredCommands, ...perNode } = common;
  const cluster = new Cluster(target.redisCluster.map(clusterNode), {
    redisOptions: perNode,
    enableAutoPipelining: enableAutoPipelining ?? false,
    ...(autoPipeliningIgnoredCommands ? { autoPipeliningIgnoredCommands } : {}),
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
