import { detailsKey, type HistoryEvent } from "../engine/core/history.js";
import { chainOne, loadHistoryHead } from "./audit/head.js";
import { RuntimeError, type Caller, type PauseInfo } from "./contract.js";
import type { Keys } from "./keys.js";
import type { HistoryHead } from "./locks.js";
import type { JobQueues } from "./queues.js";
import type { RedisClient } from "./redis.js";

/**
 * Pause and resume (scripts/pause-execution.ts has the protocol). Both write one
 * history event, built here with the next id and chained on the chain head
 * (audit/chain.ts), and fenced by the history count and head in the script, as
 * every commit is.
 *
 * Choices, as Cloudflare Workflows and Azure Durable Functions make them:
 * - tasks already running are not cancelled; their results wait with the rest;
 * - a paused execution still times out at its TimeoutSeconds, and can be stopped;
 * - pausing a paused execution is not an error (the first pause stands), so a
 *   bulk pause can be repeated.
 */
export class Pauses {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly queues: JobQueues,
    private readonly leaseMs: number,
  ) {}

  async pause(
    executionId: string,
    exec: string,
    options: { reason?: string; caller?: Caller },
  ): Promise<void> {
    const now = new Date();
    const info: PauseInfo = { at: now.toISOString() };
    if (options.reason !== undefined) info.reason = options.reason;
    if (options.caller) info.by = options.caller.name;
    const details: Record<string, string> = {};
    if (options.reason !== undefined) details.reason = options.reason;
    if (options.caller) details.callerName = options.caller.name;
    const reply = await this.fenced(exec, (head) => {
      const chained = chainOne(head, event(head.count, now, "ExecutionPaused", details));
      return this.client.run(
        "pauseExecution",
        [this.keys.execution(exec), this.keys.history(exec)],
        [
          this.keys.base,
          exec,
          head.count,
          chained.stored,
          JSON.stringify(info),
          head.hash,
          chained.hash,
        ],
      );
    });
    this.check(executionId, reply);
  }

  async resume(executionId: string, exec: string, options: { caller?: Caller }): Promise<void> {
    const now = new Date();
    const details: Record<string, string> = {};
    if (options.caller) details.callerName = options.caller.name;
    const reply = await this.fenced(exec, (head) => {
      const chained = chainOne(head, event(head.count, now, "ExecutionResumed", details));
      return this.client.run(
        "resumeExecution",
        [
          this.keys.execution(exec),
          this.keys.history(exec),
          this.keys.parked(exec),
          this.keys.schedule,
        ],
        [
          this.keys.base,
          exec,
          head.count,
          chained.stored,
          now.getTime() + this.leaseMs,
          head.hash,
          chained.hash,
        ],
      );
    });
    this.check(executionId, reply);
    // The parked runs, each with a lease in case this enqueue never happens.
    await this.queues.ensure(reply.slice(1).join(" "));
  }

  /** Runs `attempt` with the current history head until no other commit got in between. */
  private async fenced(
    exec: string,
    attempt: (head: HistoryHead) => Promise<(string | number | null)[]>,
  ): Promise<(string | number | null)[]> {
    for (;;) {
      const reply = await attempt(await loadHistoryHead(this.client, this.keys, exec));
      if (reply[0] !== "raced") return reply;
    }
  }

  private check(executionId: string, reply: (string | number | null)[]): void {
    switch (reply[0]) {
      case "paused":
      case "already":
      case "resumed":
        return;
      case "missing":
        throw new RuntimeError(
          "ExecutionDoesNotExist",
          `Execution '${executionId}' does not exist`,
        );
      case "ended":
        throw new RuntimeError(
          "ExecutionNotRunning",
          `Execution '${executionId}' is not running (${String(reply[1])})`,
        );
      case "notPaused":
        throw new RuntimeError("ExecutionNotPaused", `Execution '${executionId}' is not paused`);
      default:
        throw new Error(`pause/resume: unexpected reply ${JSON.stringify(reply)}`);
    }
  }
}

function event(
  hc: number,
  at: Date,
  type: "ExecutionPaused" | "ExecutionResumed",
  details: Record<string, string>,
): HistoryEvent {
  const history: HistoryEvent = {
    id: hc + 1,
    previousEventId: hc,
    timestamp: at.toISOString(),
    type,
  };
  history[detailsKey(type)!] = details;
  return history;
}
