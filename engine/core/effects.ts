import type { Json } from "./json.js";
import type { RunOutcome } from "./events.js";
import type { ParentLink } from "./run.js";

/**
 * What the driver must do after a step. The step executes none of these itself.
 */
export type Effect =
  /** Advance this run again: its current state is ready to execute. */
  | { type: "Continue"; runId: string }
  /** Call a task's resource. `taskId` is the attempt's stable idempotency key. */
  | {
      type: "RunTask";
      runId: string;
      taskId: string;
      stateName: string;
      resource: string;
      input: Json;
      attempt: number;
      timeoutSeconds?: number;
      heartbeatSeconds?: number;
      /** Present for `.waitForTaskToken`: the result arrives through the token's callback. */
      taskToken?: string;
      credentials?: Json;
    }
  /** Deliver `TimerFired{timerId}` to the run at `at` (epoch ms). */
  | { type: "ArmTimer"; runId: string; timerId: string; at: number; purpose: TimerPurpose }
  | { type: "CancelTimer"; runId: string; timerId: string }
  /** The run's task no longer matters (timeout, stop): forget it and its token. */
  | { type: "CancelTask"; runId: string; taskId: string; taskToken?: string }
  /** Create child runs (Parallel branches, Map iterations) and start them. */
  | { type: "SpawnChildren"; runId: string; children: ChildSpec[] }
  /** Stop these child runs (a sibling failed, or the parent was stopped). */
  | { type: "StopChildren"; runId: string; childRunIds: string[] }
  /** The run ended: the driver joins it into its parent or finishes the execution. */
  | { type: "RunEnded"; runId: string; parent?: ParentLink; outcome: RunOutcome };

export type TimerPurpose = "wait" | "retry" | "taskTimeout" | "heartbeat";

export interface ChildSpec {
  runId: string;
  scope: string;
  index: number;
  input: Json;
  outer: Record<string, Json>;
  /** Map iterations carry their index (history names them by it). */
  iteration?: number;
  /** The event the child's first event follows (its MapIterationStarted); else the parent's last. */
  previousEventId?: number;
}

export type EffectType = Effect["type"];
