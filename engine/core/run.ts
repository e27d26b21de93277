import type { PayloadPolicy } from "./payload-ref.js";
import type { HistoryFormat } from "./history.js";
import type { Json } from "./json.js";

/**
 * The serializable state of one run: the top-level execution, a Parallel branch or
 * a Map iteration. Children advance independently of their parent (each has its own
 * record and sequence number in the durable driver); the parent learns of them only
 * through `ChildEnded` events. Everything an execution needs to resume lives here.
 */
export type RunStatus = "RUNNING" | "SUCCEEDED" | "FAILED" | "ABORTED" | "TIMED_OUT";

/** What every run of one execution shares; stored once per execution. */
export interface ExecutionContext {
  executionId: string;
  name: string;
  startTime: string;
  input: Json;
  stateMachineId: string;
  stateMachineName: string;
  roleArn?: string;
  /**
   * Seed of the random stream for runs that carry none (executions started before
   * runs kept the Started event's random seed): the execution's name.
   */
  seed: string;
  /**
   * Large results and outputs go by reference (core/payload-ref.ts); unset, as on
   * AWS, they fail with States.DataLimitExceeded.
   */
  payloads?: PayloadPolicy;
  /** The payloads the driver has loaded (by hash); a step reading another raises PayloadNeeded. */
  loadPayload?: (hash: string) => Json | undefined;
}

export interface ParentLink {
  runId: string;
  /** Branch or item index within the parent's Parallel/Map state. */
  index: number;
}

/**
 * A Distributed Map's item run as AWS shows it: a child execution of the Map Run,
 * with a name, an ARN and a history of its own (engine/states/map-child-executions.ts).
 * The run stays a child run of its parent (its join, window, tolerance, stop and
 * redrive are the parent's business); only where its history goes changes.
 */
export interface ChildExecution {
  /** `arn:aws:states:<region>:<account>:execution:<machine>/<label>:<name>`. */
  arn: string;
  name: string;
  mapRunArn: string;
  /** A batch of the Map's `ItemBatcher`: its input's `Items` are its items (AWS's `itemCount`). */
  batched?: true;
  /** How often it was redriven (with its parent, engine/redrive.ts): its ExecutionRedriven's count. */
  redriveCount?: number;
}

export interface RunBase {
  runId: string;
  /** JSON pointer of the scope this run executes ("" for the top level). */
  scope: string;
  parent?: ParentLink;
  /** Variables assigned in this scope (ASL `Assign`). */
  variables: Record<string, Json>;
  /** Variables of enclosing scopes, read-only here (AWS: inner scopes never assign outer ones). */
  outer?: Record<string, Json>;
  /** Index of the Map iteration this run is (absent for the top level and Parallel branches). */
  iteration?: number;
  /**
   * A Distributed Map's item run (a child execution): its events go to a history of
   * its own, which starts with ExecutionStarted and ends with ExecutionSucceeded/…
   */
  childExecution?: ChildExecution;
  /** The random seed of the execution (the root's Started event), passed to children. */
  seed?: string;
  /**
   * The shape of the history the run writes (core/history.ts `HISTORY_FORMAT_AWS`):
   * the root's from its `Started` event, a child's from its parent. Absent: as
   * Stepwise wrote histories before it had one.
   */
  historyFormat?: HistoryFormat;
  /** Draws taken from the random stream so far. */
  random: number;
  /** Id of the last history event this run wrote (`previousEventId` of its next). */
  lastEventId: number;
  /** Monotonic counter for task ids and timer ids within this run. */
  serial: number;
  current?: Frame;
}

/** How a run ended: its status and what it ended with. */
export type RunEnd =
  | { status: "SUCCEEDED"; output: Json }
  | { status: "FAILED"; error?: string; cause?: string }
  | { status: "ABORTED" | "TIMED_OUT" };

/** A run, typed by its status: only a succeeded run has an output, only a failed one an error. */
export type RunState = RunBase & ({ status: "RUNNING" } | RunEnd);

/**
 * Ends `run` in place (its object is the one the step works on and returns). The
 * one place a run's status changes, with `reopenRun`, so the fields always match it.
 */
export function endRunState(run: RunState, end: RunEnd): void {
  const fields = run as RunBase & {
    status: RunStatus;
    output?: Json;
    error?: string;
    cause?: string;
  };
  delete fields.output;
  delete fields.error;
  delete fields.cause;
  Object.assign(fields, end);
}

/** An ended run runs again (a redrive): RUNNING, without its outcome. */
export function reopenRun(run: RunState): void {
  endRunState(run, { status: "ABORTED" });
  (run as RunBase & { status: RunStatus }).status = "RUNNING";
}

/** The state a run is in, and how far it got. */
export interface Frame {
  name: string;
  /** The raw state input. */
  input: Json;
  enteredTime: string;
  enteredEventId: number;
  /** The event its StateEntered followed (HISTORY_FORMAT_AWS: an evaluation failure follows it too). */
  enteredAfter?: number;
  phase: Phase;
  /** Attempts made per retrier (index-aligned with `Retry`). */
  retries?: number[];
  /** How many times the state was retried in total (`$$.State.RetryCount`). */
  retryCount?: number;
  /** A Task's operation key, named by its first attempt and kept for its retries (core/operation-key.ts). */
  operationKey?: string;
  /** A Distributed Map's Map Run (engine/states/map-io-resources.ts), from its start to its end. */
  mapRunArn?: string;
}

export type Phase =
  | { kind: "entering" }
  | {
      kind: "task";
      taskId: string;
      timerIds: string[];
      heartbeatTimerId?: string;
      token?: string;
      /** An approval's expiry: its firing fails the task with Stepwise.ApprovalExpired. */
      expiryTimerId?: string;
      /** An approval's reminders (`reminder:<i>`) and escalation (`escalation:<g1>,<g2>`), by timer id. */
      noticeTimers?: Record<string, string>;
      /** A Distributed Map's own I/O at the edge (its ItemReader, its ResultWriter), not a Task's call. */
      purpose?: "itemReader" | "resultWriter";
    }
  | {
      kind: "waiting";
      timerId: string;
      output: Json;
      /** The variables the Wait assigned on entering, for its exit's history event. */
      assigned?: Record<string, Json>;
    }
  | { kind: "backoff"; timerId: string }
  | { kind: "children"; join: Join }
  /** Every child ended; waiting for `ResultsCollected` (the driver delivers it next). */
  | {
      kind: "collecting";
      prefix: string;
      total: number;
      /** A Distributed Map's children that failed within the tolerance (its ResultWriter writes them). */
      failed?: number;
      /** Of `failed`, those stopped by their own StopExecution (the join's `aborted`). */
      aborted?: number;
    };

/**
 * A Parallel or Map state waiting for its children. Child `i` has run id
 * `${prefix}/${i}`. Children start in index order, so children `0..started-1`
 * have started and the rest wait for room in the `MaxConcurrency` window.
 *
 * Only counters change as children end: a child's end costs the parent O(1) in
 * CPU and in bytes stored, however many children the join has. The driver keeps
 * the children's outputs (see the `CollectResults` effect) and knows which
 * children are still running (see `StopChildren`), and it tells the parent of
 * each child's end exactly once. Nothing here grows with the number of children:
 * the inputs of children a window starts later are kept by the driver too
 * (`KeepInputs`).
 */
export interface Join {
  prefix: string;
  total: number;
  started: number;
  succeeded: number;
  failed: number;
  /**
   * Of `failed`, the children that ended ABORTED (a Map Run's child stopped by its own
   * StopExecution): AWS's DescribeMapRun counts them apart. Absent while none did.
   */
  aborted?: number;
  /** 0 means no limit. */
  maxConcurrency: number;
  toleratedFailureCount?: number;
  toleratedFailurePercentage?: number;
  /** The variables children see, captured when the state started. */
  outer: Record<string, Json>;
  /**
   * A Distributed Map with an EXPRESS processor: its items run in chunks, each a
   * task of the Map state's own (engine/states/map-express-chunks.ts), not as
   * child runs. `running`: `[from, count]` of each chunk in flight, so a chunk's
   * result is taken in once (a redelivered one finds its chunk gone).
   *
   * `indices`: a redriven Map Run's join runs only the items that did not succeed
   * (engine/flow/redrive-join.ts): its items sit at positions 0.. of the driver's
   * keeping and of its chunks (`running` holds positions, and each chunk's items'
   * indices in the Map), and `indices` holds the Map's indices of the positions not
   * handed out yet, as ranges `[first index, count]` in order (it shrinks as chunks
   * start). `base` items it does not run count as started and succeeded from the start
   * (their outputs are kept), so `started - succeeded - failed` is still what runs,
   * and a chunk's first position is `started - base`. Absent: position `i` is item `i`.
   */
  chunks?: {
    size: number;
    running: [from: number, count: number, indices?: number[]][];
    indices?: [number, number][];
    base?: number;
  };
}
