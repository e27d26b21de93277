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
export function bullConnection(url: string, name: string): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    connectionName: name,
    retryStrategy: (times) => Math.min(50 * times, 1000),
  });
  logConnectionErrors(redis, name);
  return redis;
}
