import type { RunEvent } from "../../engine/core/events.js";
import { operatorEvent } from "../../engine/core/history.js";
import { checkpointSigner } from "../audit/checkpoints.js";
import { chainOne, loadHistoryHead } from "../audit/head.js";
import { pack } from "../store/codec.js";
import { RuntimeError, type Caller, type PauseInfo } from "../contract/index.js";
import { longId } from "../store/ids.js";
import type { Keys } from "../store/keys.js";
import type { HistoryHead } from "../commit/commit-locks.js";
import type { JobQueues } from "../worker/queues.js";
import type { RedisClient } from "../store/redis.js";
import {
  pauseExecution,
  resumeExecution,
  type PauseReply,
  type ResumeReply,
} from "../store/scripts/pause-execution.js";

/**
 * Pause and resume (store/scripts/pause-execution.ts has the protocol). Both write one
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
    /** `STEPWISE_AUDIT_KEY`: pause and resume events are chained with their checkpoints (audit/checkpoints.ts). */
    private readonly auditKeyFile?: string,
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
    const body = {
      type: "Paused" as const,
      ...(options.reason !== undefined ? { reason: options.reason } : {}),
    };
    const reply = await this.fenced(exec, (head) => {
      const out = written(exec, head, now, body, options.caller, this.auditKeyFile);
      return this.client.call(
        pauseExecution,
        {
          execution: this.keys.execution(exec),
          history: this.keys.history(exec),
          journal: this.keys.journal(exec),
        },
        { ...this.fence(exec, head, out), pause: JSON.stringify(info) },
      );
    });
    this.check(executionId, reply);
  }

  async resume(executionId: string, exec: string, options: { caller?: Caller }): Promise<void> {
    const now = new Date();
    const reply = await this.fenced(exec, (head) => {
      const out = written(exec, head, now, { type: "Resumed" }, options.caller, this.auditKeyFile);
      return this.client.call(
        resumeExecution,
        {
          execution: this.keys.execution(exec),
          history: this.keys.history(exec),
          parked: this.keys.parked(exec),
          schedule: this.keys.schedule,
          journal: this.keys.journal(exec),
        },
        { ...this.fence(exec, head, out), leaseUntil: now.getTime() + this.leaseMs },
      );
    });
    this.check(executionId, reply);
    // The parked runs, each with a lease in case this enqueue never happens.
    if (reply.kind === "resumed") await this.queues.ensure(reply.jobs.join(" "));
  }

  private fence(exec: string, head: HistoryHead, out: ReturnType<typeof written>) {
    return {
      base: this.keys.base,
      exec,
      event: out.history,
      journal: out.journal,
      historyCount: head.count,
      historyHead: head.hash,
      newHistoryHead: out.hash,
    };
  }

  /** Runs `attempt` with the current history head until no other commit got in between. */
  private async fenced<R extends PauseReply | ResumeReply>(
    exec: string,
    attempt: (head: HistoryHead) => Promise<R>,
  ): Promise<R> {
    for (;;) {
      const reply = await attempt(await loadHistoryHead(this.client, this.keys, exec));
      if (reply.kind !== "raced") return reply;
    }
  }

  private check(executionId: string, reply: PauseReply | ResumeReply): void {
    switch (reply.kind) {
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
          `Execution '${executionId}' is not running (${reply.status})`,
        );
      case "notPaused":
        throw new RuntimeError("ExecutionNotPaused", `Execution '${executionId}' is not paused`);
      case "raced":
        throw new Error("pause/resume: a raced reply is fenced again, never checked");
    }
  }
}

/**
 * The history event and the journal entry of a pause or resume: the same pure
 * function writes the event here and in replay (engine/core/history.ts), and the
 * journal keeps the event that replay feeds to it.
 */
function written(
  exec: string,
  head: HistoryHead,
  at: Date,
  body: { type: "Paused"; reason?: string } | { type: "Resumed" },
  caller: Caller | undefined,
  auditKeyFile: string | undefined,
): { history: string; hash: string; journal: string } {
  const event = {
    ...body,
    eventId: head.count + 1,
    time: at.toISOString(),
    ...(caller ? { caller: caller.name } : {}),
  } as Extract<RunEvent, { type: "Paused" | "Resumed" }>;
  const chained = chainOne(head, operatorEvent(event), checkpointSigner(auditKeyFile));
  return {
    history: chained.stored,
    hash: chained.hash,
    journal: pack(JSON.stringify({ runId: longId(exec), event })),
  };
}
