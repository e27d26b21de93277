import type { HistoryFormat } from "./history.js";
import type { Json } from "./json.js";
import type { TimerPurpose } from "./effects.js";
import type { RunState } from "./run.js";
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
  /**
   * `seed` (root runs): 128 random bits the driver drew at the start, hex. The run
   * keeps it and hands it to its children, and States.UUID, $uuid, $random and retry
   * jitter draw from it, so values are unguessable from the execution's name yet
   * replay from the journal, where this event is recorded.
   */
  | (Base & {
      type: "Started";
      input: Json;
      seed?: string;
      /**
       * The version (and alias) a start was addressed to, as AWS records them in
       * ExecutionStarted: an alias picks its version by weight, and the pick is history.
       */
      stateMachineVersionArn?: string;
      stateMachineAliasArn?: string;
      /** The state machine's role when the execution started, as ExecutionStarted records it. */
      roleArn?: string;
      /** Stepwise's: the execution this one restarts (same version, same input). */
      restartedFrom?: string;
      /**
       * The shape of the history the execution writes (core/history.ts): a new
       * execution's start names the current one; journals without it are older and
       * replay to the history they wrote.
       */
      historyFormat?: HistoryFormat;
    })
  /**
   * The first event of a fork (runtime/executions/fork.ts): the run takes what the source's
   * top level held where it was forked (its variables, random seed and draws, id
   * counter) and enters `state` with `input`. Carried whole in the event, so the
   * fork's journal replays on its own like any other.
   */
  | (Base & {
      type: "Forked";
      sourceExecution: string;
      sourceEventId: number;
      state: string;
      input: Json;
      variables: Record<string, Json>;
      seed?: string;
      random: number;
      serial: number;
      /**
       * A fork from inside a Map iteration or Parallel branch (engine/fork.ts): the
       * top level whole, as it was (renamed into the fork), and how it goes on; its
       * other runs start with `Restored`. Absent: it enters `state` with `input`.
       */
      run?: RunState;
      resume?: ForkResume;
    })
  /**
   * The first event of a run that a fork or a redrive creates (a Map iteration, a
   * Parallel branch): the run as it was (in the source at the fork point, renamed
   * into the fork; or as it ended, renamed into its parent's new join) and how it
   * goes on. The driver creates the run idle, as `restoredRun(run)` (step.ts) makes
   * it, and the top level's first step wakes it; replay makes the same record.
   */
  | (Base & { type: "Restored"; run: RunState; resume: ForkResume })
  /**
   * A redrive (engine/redrive.ts): the ended top level runs again from `state`, the
   * state it ended in, entered again with the `input` it had; its variables, random
   * stream and ids go on from where they were. A Map or Parallel state it ended in
   * waiting for its children comes with `join`: only the children that did not
   * succeed run again (AWS's RedriveExecution).
   */
  | (Base & RedrivePoint & { type: "Redriven"; redriveCount: number })
  /**
   * An operator paused or resumed the execution (runtime/executions/pause.ts). The driver
   * writes these without stepping the run (it is paused, or resuming); they are in
   * the journal so that replay writes the same history: the run is not changed.
   */
  | (Base & { type: "Paused"; reason?: string })
  | (Base & { type: "Resumed" })
  | (Base & { type: "Continue" })
  | (Base & {
      type: "TaskSucceeded";
      taskId: string;
      output: Json;
      /**
       * What a model call spent, metered by the driver (runtime/commit/usage.ts), which adds
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
   * UpdateMapRun (runtime/map-runs/): a running Map Run's concurrency or failure
   * tolerance changes; its Map starts more children at once if the window grew.
   */
  | (Base & {
      type: "MapRunUpdated";
      mapRunArn: string;
      maxConcurrency?: number;
      toleratedFailureCount?: number;
      toleratedFailurePercentage?: number;
    })
  /**
   * An approver decided (runtime/approvals/approval-store.ts, atomically with the record). `status`
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
      /** The approval's answer to its `ResponseSchema` so far (the last one sent). */
      response?: Json;
      /** An EDIT among the decisions: the details it made and its patch. */
      edit?: { details: Json; patch: Json };
    })
  /**
   * Human tasks: an approval was claimed, released, delegated or commented on
   * (runtime/approvals/approval-assign.ts, atomically with the record); the step
   * records it as the history event `kind` and changes nothing else.
   */
  | (Base & {
      type: "ApprovalNoted";
      taskId: string;
      approvalId: string;
      kind: ApprovalNoteKind;
      by: string;
      details: { [field: string]: Json };
    })
  | (Base & {
      type: "ChildEnded";
      childRunId: string;
      index: number;
      outcome: ChildOutcome;
      /** Where the child's history ended (the `RunEnded` effect's), for HISTORY_FORMAT_AWS links. */
      eventIds?: ChildEventIds;
    })
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

/**
 * A Map or Parallel state's children as the redriven execution found them, carried
 * whole in the `Redriven` event so that the step stays pure and its journal replays
 * on its own: what succeeded is kept, what failed, was aborted or never started runs
 * again with the input it had. The join's window and tolerance are the old join's.
 */
export interface RedriveJoin {
  total: number;
  maxConcurrency: number;
  toleratedFailureCount?: number;
  toleratedFailurePercentage?: number;
  /** The variables the children see, as the state captured them when it started. */
  outer: Record<string, Json>;
  /** `[index, output]` of the children that succeeded: not run again. */
  kept: [number, Json][];
  /**
   * `[index, input]` of the started children that did not succeed and never entered
   * a state (stopped before they started): they start again at once, from the start.
   */
  rerun: [number, Json][];
  /**
   * Indices of the children that failed or were aborted in a state: each is redriven
   * in place (its run, renamed into the new join, is created with the redrive and
   * begins with `Restored`), from the state it ended in. This step wakes them.
   */
  redriven?: number[];
  /**
   * The redriven children are a Distributed Map's child executions: their events go
   * on in their own histories, so the parent records no MapIterationStarted for them.
   */
  childExecutions?: boolean;
  /**
   * A Distributed Map's Map Run, redriven with its parent (AWS: "The parent workflow
   * redrives all the unsuccessful states, including a failed Map Run"): the same ARN,
   * and how many times it has been redriven, this one included (MapRunRedriven's
   * `redriveCount`). Absent for an Inline Map, a Parallel, and a Map Run that had
   * succeeded (its state failed after it): that one is not redriven.
   */
  mapRun?: { arn: string; redriveCount: number };
  /**
   * A Distributed Map with an EXPRESS processor whose items ran in chunks: the items
   * that did not succeed (`rerun`, then `waiting`) run again in chunks too, as the
   * first run's did (engine/states/map-express-chunks.ts), not as child runs. Absent
   * in journals written before: those redrives ran them as iterations, and replay so.
   */
  chunks?: true;
  /** Children `started ..` never started: they start as the window makes room, with these inputs. */
  started: number;
  waiting: Json[];
}

/**
 * How a run of a fork goes on from where the source's was (engine/flow/fork-resume.ts).
 * What the source had in flight lives outside the run's state (the driver's timers,
 * its tasks, its children's kept outputs and inputs), so it travels here.
 */
export interface ForkResume {
  /** Enter the current state again with this input (the fork point's state, a state
   * about to execute, or a Task in flight: it is scheduled again). */
  enter?: Json;
  /** A child that had not started: it starts with this input. */
  start?: Json;
  /** Its join's children that had ended and been taken in: `[index, output]` (null: failed). */
  kept?: [number, Json][];
  /** The inputs of its join's children not started yet (from the join's `started`). */
  waiting?: Json[];
  /** Its timers armed at the fork point (a Wait, a retry's backoff): armed again, same instant. */
  timers?: { timerId: string; at: number; purpose: TimerPurpose }[];
  /**
   * The top level's: the fork's other runs, which the driver created idle. They are
   * woken by this first step, so the fork's history begins with ExecutionForked.
   */
  wake?: string[];
  /**
   * A Map iteration or Parallel branch redriven in place (engine/redrive.ts): it runs
   * again from the state it ended in, as a redriven top level does. Its run is the
   * one that ended, renamed into its parent's new join: its history goes on.
   */
  redrive?: RedrivePoint;
}

/** Where a redriven run takes up: the state it ended in, its input, and its join's children. */
export interface RedrivePoint {
  state: string;
  input: Json;
  join?: RedriveJoin;
}

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

/**
 * The last events a child run wrote, which its parent's next events follow in AWS's
 * history (core/history.ts, HISTORY_FORMAT_AWS): `last`, its last event before it
 * ended, and `end`, its own end event (a Map iteration's MapIterationSucceeded…; a
 * Parallel branch writes none: `last` again).
 */
export interface ChildEventIds {
  last: number;
  end: number;
}

export type RunEventType = RunEvent["type"];

/** The history events of an approval's assignment and conversation (ApprovalNoted). */
export type ApprovalNoteKind =
  "ApprovalClaimed" | "ApprovalReleased" | "ApprovalDelegated" | "ApprovalCommented";

/** An event before the driver stamps it with `time` and `eventId`. */
export type RunEventBody = RunEvent extends infer E
  ? E extends RunEvent
    ? Omit<E, "time" | "eventId" | "nonce">
    : never
  : never;
