import type { Json } from "./json.js";
import type { ChildEventIds, RunOutcome } from "./events.js";
import type { HistoryFormat } from "./history.js";
import type { ChildExecution, ParentLink } from "./run.js";
import type { ApprovalRequest } from "../states/approval.js";

/**
 * What the driver must do after a step. The step executes none of these itself.
 */
export type Effect =
  /** Advance this run again: its current state is ready to execute. */
  | { type: "Continue"; runId: string }
  /** Keep this JSON text with the execution's payloads, under its SHA-256 (core/payload-ref.ts). */
  | { type: "StorePayload"; runId: string; hash: string; text: string }
  /** Call a task's resource. `taskId` is the attempt's stable idempotency key. */
  | {
      type: "RunTask";
      runId: string;
      taskId: string;
      /** Stable across Retry attempts of one entry into the state (core/operation-key.ts). */
      operationKey: string;
      stateName: string;
      resource: string;
      input: Json;
      attempt: number;
      timeoutSeconds?: number;
      heartbeatSeconds?: number;
      /** Present for `.waitForTaskToken`: the result arrives through the token's callback. */
      taskToken?: string;
      credentials?: Json;
      /** An approval task: the record to create with the task, in the same commit. */
      approval?: ApprovalRequest;
    }
  /** Deliver `TimerFired{timerId}` to the run at `at` (epoch ms). */
  | { type: "ArmTimer"; runId: string; timerId: string; at: number; purpose: TimerPurpose }
  | { type: "CancelTimer"; runId: string; timerId: string }
  /** The run's task no longer matters (timeout, stop): forget it and its token. */
  | {
      type: "CancelTask";
      runId: string;
      taskId: string;
      taskToken?: string;
      /** An approval task: its record leaves PENDING (CANCELLED on a stop, else EXPIRED). */
      approvalId?: string;
    }
  /**
   * A pending approval's reminder or escalation fired: send its webhook event
   * (`approval.reminder`, `approval.escalated`) and, escalating, add `groups` to
   * those who may decide it; nothing when it is no longer pending.
   */
  | { type: "NoticeApproval"; runId: string; approvalId: string; event: string; groups: string[] }
  /**
   * Run items `from` .. `from + count - 1` of a join (a Distributed Map's EXPRESS
   * processor) in memory, each as an Express execution of `processor`, with the
   * inputs the driver keeps for them (`KeepInputs`), as ONE durable unit: a task of
   * the Map state's own (claimed, retried, redelivered like any), whose answer is
   * `TaskSucceeded{taskId, output: ChunkResult}` (engine/states/map-express-chunks.ts).
   */
  | {
      type: "RunChunk";
      runId: string;
      taskId: string;
      stateName: string;
      prefix: string;
      from: number;
      count: number;
      processor: ChunkProcessor;
    }
  /** Create child runs (Parallel branches, Map iterations) and start them. */
  | { type: "SpawnChildren"; runId: string; children: ChildSpec[] }
  /**
   * Deliver `ContinueJoin{prefix}` to the run, behind what it already has: the
   * join has more children to start at once than one step starts (`SPAWN_BATCH`),
   * so the next batch starts in a transition of its own.
   */
  | { type: "ContinueJoin"; runId: string; prefix: string }
  /**
   * Stop the children `${prefix}/0` .. `${prefix}/${started - 1}` of a join that are
   * still running (a sibling failed, or the parent was stopped). The driver knows
   * which ones ended (it keeps their ends, see `CollectResults`); the parent only
   * counts them.
   */
  | { type: "StopChildren"; runId: string; prefix: string; started: number }
  /**
   * Every child of the join ended and the state will use their outputs: deliver
   * `ResultsCollected{prefix, outputs}` to the run, next, with the outputs the
   * driver kept as the children `${prefix}/0` .. `${prefix}/${total - 1}` ended
   * (null for a child that did not succeed).
   */
  | { type: "CollectResults"; runId: string; prefix: string; total: number }
  /**
   * Keep these `[index, output]` as ends of the join's children (null: did not
   * succeed), where the driver has none yet: the children that succeeded before
   * a join was reopened by a redrive (engine/flow/redrive-join.ts) or rebuilt by
   * a fork (engine/flow/fork-resume.ts), whose runs are gone.
   */
  | { type: "KeepOutputs"; runId: string; prefix: string; outputs: [number, Json][] }
  /**
   * The inputs of a Map window's children that start later: child `from + k` gets
   * `inputs[k]`. The driver keeps them and gives each to its child when the child
   * is spawned without an input, so the parent's state never carries them (it is
   * rewritten at every child's end).
   */
  | { type: "KeepInputs"; runId: string; prefix: string; from: number; inputs: Json[] }
  /**
   * The run ended: the driver finishes the execution, or keeps a child's output for
   * its parent's join (`CollectResults`) and tells the parent, once, with `ChildEnded`.
   */
  | {
      type: "RunEnded";
      runId: string;
      parent?: ParentLink;
      outcome: RunOutcome;
      /**
       * A child's last events (HISTORY_FORMAT_AWS), for its parent: the driver passes
       * them on in `ChildEnded`.
       */
      eventIds?: ChildEventIds;
    };

/** What each item of a chunk runs as: the Map's ItemProcessor as a state machine of its own. */
export interface ChunkProcessor {
  /** StartAt, States and the QueryLanguage it inherits. */
  definition: Json;
  /** Its children are named under it (map-child-executions.ts); absent outside a Map Run. */
  mapRunArn?: string;
  /**
   * The Map's index of each item of the chunk, when they are not `from`, `from + 1`, …
   * (a redriven Map Run's chunk runs only items that did not succeed: Join `chunks.indices`).
   */
  indices?: number[];
}

export type TimerPurpose =
  | "wait"
  | "retry"
  | "taskTimeout"
  | "heartbeat"
  | "approvalExpiry"
  /** An approval's reminder or escalation (human tasks): it notifies, it ends nothing. */
  | "approvalNotice";

export interface ChildSpec {
  runId: string;
  scope: string;
  index: number;
  /** Absent: the input the driver keeps for this child (`KeepInputs`). */
  input?: Json;
  outer: Record<string, Json>;
  /** Map iterations carry their index (history names them by it). */
  iteration?: number;
  /** The event the child's first event follows (its MapIterationStarted); else the parent's last. */
  previousEventId?: number;
  /** The shape of the history the child writes: its parent's (core/history.ts). */
  historyFormat?: HistoryFormat;
  /** A Distributed Map's item: a child execution, whose history is its own (ids from 1). */
  execution?: ChildExecution;
}

export type EffectType = Effect["type"];
