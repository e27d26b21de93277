import type { RunEventBody } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import { checkpointSigner } from "../audit/checkpoints.js";
import { chainOne, loadHistoryHead } from "../audit/head.js";
import { executionOf, executionTimeoutTimer, longId, member } from "../store/ids.js";
import { giveUp, type GiveUpReply } from "../store/scripts/give-up.js";
import { advance, type TransitionDeps } from "./transition.js";

/**
 * POISON RUNS. A transition job that throws (a Redis reply the worker did not
 * expect, a script error, unreadable state, a bug) is retried by BullMQ a few
 * times with backoff (`STEP_ATTEMPTS`, queues.ts): most faults of that kind are
 * passing. When the last attempt fails too, the worker gives up on the
 * execution instead of letting the run's lease enqueue the same job forever:
 * it fails with States.Runtime and a cause that names the fault (see
 * store/scripts/give-up.ts for how), the fault is reported with the execution's id, and
 * `stats.poisoned` counts it for /metrics.
 */
export type GiveUpResult =
  /** The Stop failed the execution through the ordinary step; the run that could not advance was deleted. */
  | "stopped"
  /** The execution was ended FAILED without the step (the stop did not help). */
  | "ended"
  /** The execution had ended already; the run that could not advance was deleted. */
  | "dropped"
  | "missing";

type ScriptOutcome = Exclude<GiveUpReply, { kind: "raced" }>;

/**
 * Gives up on `run` after its job failed `attempts` times with `fault`. The
 * Stop is committed here and now, by the worker that gives up, not by a job:
 * the job the root run would get has the id of the job that just failed when
 * the root run is the one that failed, and would be ignored while that is active.
 */
export async function giveUpOn(
  deps: TransitionDeps,
  run: string,
  attempts: number,
  fault: unknown,
): Promise<GiveUpResult> {
  const first = await requestGiveUp(deps, run, attempts, fault);
  if (first.kind !== "stopping") return first.kind;
  let last = fault;
  try {
    await advance(deps, executionOf(run), first.seq);
  } catch (stopFault) {
    last = stopFault;
  }
  // Stopped or not, the run that failed cannot advance: drop it, or end the execution here.
  const second = await requestGiveUp(deps, run, attempts, last);
  return second.kind === "dropped" ? "stopped" : (second.kind as GiveUpResult);
}

export const GIVE_UP_ERROR = "States.Runtime";

export function giveUpCause(run: string, attempts: number, fault: unknown): string {
  const reason = fault instanceof Error ? `${fault.name}: ${fault.message}` : String(fault);
  return `Stepwise gave up on run '${longId(run)}' after ${attempts} failed attempts to process it: ${reason}`;
}

async function requestGiveUp(
  deps: TransitionDeps,
  run: string,
  attempts: number,
  fault: unknown,
): Promise<ScriptOutcome> {
  const { client, keys, settings } = deps;
  const exec = executionOf(run);
  const cause = giveUpCause(run, attempts, fault);
  const stop: RunEventBody = { type: "Stop", status: "FAILED", error: GIVE_UP_ERROR, cause };
  for (;;) {
    const head = await loadHistoryHead(client, keys, exec);
    const hc = head.count;
    const now = Date.now();
    const failed: HistoryEvent = {
      id: hc + 1,
      previousEventId: hc,
      timestamp: new Date(now).toISOString(),
      type: "ExecutionFailed",
      executionFailedEventDetails: { error: GIVE_UP_ERROR, cause },
    };
    const chained = chainOne(head, failed, checkpointSigner(settings.auditKeyFile));
    const reply = await client.call(
      giveUp,
      {
        execution: keys.execution(exec),
        rootRun: keys.run(exec),
        rootInbox: keys.inbox(exec),
        schedule: keys.schedule,
        run: keys.run(run),
        inbox: keys.inbox(run),
        history: keys.history(exec),
        journal: keys.journal(exec),
      },
      {
        base: keys.base,
        root: exec,
        run,
        stop: JSON.stringify(stop),
        leaseUntil: now + settings.leaseMs,
        failed: chained.stored,
        historyCount: hc,
        historyHead: head.hash,
        newHistoryHead: chained.hash,
        end: {
          exec,
          status: "FAILED",
          error: GIVE_UP_ERROR,
          cause: cause || undefined,
          stoppedAt: failed.timestamp,
          timeoutMember: member.timer(executionTimeoutTimer(exec)),
          keepSeconds: settings.retentionSeconds,
        },
      },
    );
    if (reply.kind === "raced") continue;
    return reply;
  }
}
