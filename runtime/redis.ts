import { Redis } from "ioredis";
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
import type { ScriptSpec } from "./scripts/spec.js";
import { startExecution } from "./scripts/start-execution.js";

/** Every Lua script of the runtime, registered on each connection (EVALSHA). */
const SCRIPTS = [
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
] as const;

export type ScriptName = (typeof SCRIPTS)[number]["name"];
type Arg = string | number | Buffer;
export type ScriptReply = (string | number | null)[];

/**
 * A Redis connection with the runtime's scripts. `maxRetriesPerRequest: null`
 * makes commands wait through a Redis restart instead of failing (BullMQ needs
 * the same); auto-pipelining batches the many small commands of concurrent jobs.
 */
export class RedisClient {
  readonly redis: Redis;

  constructor(url: string, options: { name?: string } = {}) {
    this.redis = new Redis(url, {
      maxRetriesPerRequest: null,
      enableAutoPipelining: true,
      connectionName: options.name ?? "stepwise",
      retryStrategy: (times) => Math.min(50 * times, 1000),
    });
    // Connection errors are retried (retryStrategy); commands wait meanwhile.
    logConnectionErrors(this.redis, options.name ?? "stepwise");
    for (const script of SCRIPTS) define(this.redis, script);
  }

  /**
   * Runs a script: `keys` then `args`, as its header documents.
   *
   * The two lists go to ioredis as two arguments, never spread: a commit's
   * argument list grows with what it writes (children, history events, kept
   * inputs), and spreading tens of thousands of them into a call overflowed the
   * stack inside ioredis's auto-pipeline, which then threw from a callback and
   * took the process down (issue 20). ioredis flattens nested lists itself
   * (`Command` does `args.flat()`), without recursion.
   */
  async run(name: ScriptName, keys: string[], args: Arg[]): Promise<ScriptReply> {
    return this.script<ScriptReply>(name)(keys, args);
  }

  /** As `run`, with the reply's strings as Buffers (for values stored packed, see codec.ts). */
  async runBuffer(name: ScriptName, keys: string[], args: Arg[]): Promise<(Buffer | null)[]> {
    return this.script<(Buffer | null)[]>(`${name}Buffer`)(keys, args);
  }

  private script<R>(name: string): (keys: string[], args: Arg[]) => Promise<R> {
    const fn = (this.redis as unknown as Record<string, (k: string[], a: Arg[]) => Promise<R>>)[
      name
    ];
    if (!fn) throw new Error(`script ${name} is not registered`);
    return fn.bind(this.redis);
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}

function define(redis: Redis, script: ScriptSpec): void {
  redis.defineCommand(script.name, { numberOfKeys: script.keys, lua: script.lua });
}

/** A separate connection for BullMQ (blocking commands must not share ours). */
export function bullConnection(url: string, name: string): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    connectionName: name,
    retryStrategy: (times) => Math.min(50 * times, 1000),
  });
  logConnectionErrors(redis, name);
  return redis;
}
