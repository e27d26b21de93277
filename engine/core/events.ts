import type { Json } from "./json.js";
import type { ApprovalDecision } from "../states/approval.js";

/**
 * What happened to a run. Time, task results and callbacks enter the pure step only
 * through these events, so replaying the recorded events rebuilds the same state.
 * `time` is an ISO-8601 instant from the driver's clock; `eventId` is the id the
 * driver will give the first history event this step writes.
 */
interface Base {
  time: string;
  eventId: number;
  /**
   * Fresh entropy from the driver (at least 128 bits, URL-safe), used for task
   * tokens: tokens must be unguessable, which a seeded stream cannot promise.
   */
  nonce?: string;
  /**
   * Who caused the event through the API (the key's name): a start, a stop, a
   * task token's answer. It goes into the history event the step writes for it.
   */
  caller?: string;
}

export type RunEvent =
  | (Base & {
      type: "Started";
      input: Json;
      /**
       * The version (and alias) a start was addressed to, as AWS records them in
       * ExecutionStarted: an alias picks its version by weight, and the pick is history.
       */
      stateMachineVersionArn?: string;
      stateMachineAliasArn?: string;
      /** Stepwise's: the execution this one restarts (same version, same input). */
      restartedFrom?: string;
    })
  | (Base & { type: "Continue" })
  | (Base & {
      type: "TaskSucceeded";
      taskId: string;
      output: Json;
      /**
       * What a model call spent, metered by the driver (runtime/usage.ts), which adds
       * it to the execution's totals in the commit of this event; the step ignores it.
       */
      usage?: { modelCalls: number; inputTokens: number; outputTokens: number; costUsd: number };
    })
  | (Base & { type: "TaskFailed"; taskId: string; error: string; cause?: string })
  | (Base & { type: "TaskHeartbeat"; taskId: string })
  /**
   * A `.waitForTaskToken` call returned: the task now waits for its token's answer
   * (AWS records TaskSubmitted with the call's response).
   */
  | (Base & { type: "TaskSubmitted"; taskId: string; output: Json })
  /** An activity worker took the task (AWS records ActivityStarted with its name). */
  | (Base & { type: "TaskStarted"; taskId: string; workerName?: string })
  | (Base & { type: "TimerFired"; timerId: string })
  /** Start the next batch of the join's children (the `ContinueJoin` effect). */
  | (Base & { type: "ContinueJoin"; prefix: string })
  /**
   * An approver decided (runtime/approvals.ts, atomically with the record). `status`
   * is the record's after the decision: PENDING while more approvals are needed.
   */
  | (Base & {
      type: "ApprovalDecided";
      taskId: string;
      approvalId: string;
      envelopeHash: string;
      decision: ApprovalDecision;
      status: "PENDING" | "APPROVED" | "REJECTED";
      decisions: ApprovalDecision[];
    })
  | (Base & { type: "ChildEnded"; childRunId: string; index: number; outcome: ChildOutcome })
  /**
   * The outputs of a join's children, in index order (null for a failed child), that
   * the driver kept while they ended; the answer to a `CollectResults` effect.
   */
  | (Base & { type: "ResultsCollected"; prefix: string; outputs: Json[] })
  | (Base & {
      type: "Stop";
      error?: string;
      cause?: string;
      /** ABORTED by default; FAILED when the driver gives up on a run it cannot advance. */
      status?: "ABORTED" | "TIMED_OUT" | "FAILED";
    });

export type RunOutcome =
  | { status: "SUCCEEDED"; output: Json }
  | { status: "FAILED"; error?: string; cause?: string }
  | { status: "ABORTED" };

/**
 * A child's end as its parent learns it: without the output, which the driver keeps
 * (keyed by join and index) until the parent collects the outputs of all children
 * at once. Applying one child's end so costs the parent O(1), however wide the join.
 */
export type ChildOutcome =
  | { status: "SUCCEEDED" }
  | { status: "FAILED"; error?: string; cause?: string }
  | { status: "ABORTED" };

export type RunEventType = RunEvent["type"];

/** An event before the driver stamps it with `time` and `eventId`. */
export type RunEventBody = RunEvent extends infer E
  ? E extends RunEvent
    ? Omit<E, "time" | "eventId" | "nonce">
    : never
  : never;
