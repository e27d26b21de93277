import type { PayloadPolicy } from "../core/payload-ref.js";
import type { StateMachineDefinition } from "../core/definition.js";
import type { Effect } from "../core/effects.js";
import type { ChildEventIds, RunEvent, RunEventBody, RunOutcome } from "../core/events.js";
import { HISTORY_FORMAT_AWS, type HistoryEvent, type HistoryFormat } from "../core/history.js";
import type { Json } from "../core/json.js";
import type { ExecutionContext, ParentLink, RunState } from "../core/run.js";
import type { ForkPlan } from "../fork.js";
import type { RedrivePlan } from "../redrive.js";
import { compileProgram, type Program } from "../program.js";
import { childRun, newRun, type StepResult } from "../step.js";
import { stepHere } from "./heavy-steps.js";
import { waitsForToken } from "../states/task.js";
import { Deque } from "./deque.js";
import { TimerQueue } from "./timer-queue.js";
import { resolveTask, type MockResponse, type TaskHandlers } from "./tasks.js";
import { taskKind } from "../states/task-history.js";
import { randomBytes, randomHex } from "./entropy.js";
import { runChunkItems, type ChunkRunOptions } from "./express-chunk.js";

export type { MockResponse, TaskHandler, TaskHandlers, TaskInvocation } from "./tasks.js";

/**
 * The in-memory driver: runs the pure `step` in-process until the execution ends.
 * Used by the CLI (`stepwise run`, `stepwise test`) and the unit tests. On the
 * virtual clock (the default) waits and retry backoffs cost no real time: when
 * nothing else can happen, the clock jumps to the next timer.
 */
export interface MemoryRunOptions {
  input?: Json;
  /** Large results and outputs go by reference (core/payload-ref.ts); unset, as on AWS. */
  payloads?: PayloadPolicy;
  executionName?: string;
  stateMachineName?: string;
  /** `virtual` (default) jumps over waits; `real` sleeps them, divided by `timeScale`. */
  clock?: "virtual" | "real";
  timeScale?: number;
  /** ISO instant the execution starts at (default: now). */
  startTime?: string;
  /** Seed of the random stream (default: 128 random bits); fix it for reproducible values. */
  seed?: string;
  tasks?: TaskHandlers;
  /** Per Task state name, the responses of its successive invocations (AWS Step Functions Local style). */
  mocks?: Record<string, MockResponse[]>;
  /** Entropy for task tokens (default: crypto random, 128 bits, URL-safe). */
  nonce?: () => string;
  /** Safety net against runaway loops. */
  maxTransitions?: number;
  /**
   * Run a fork (engine/fork.ts, planned with this execution's id): its first event in
   * place of Started, and its other runs, created with it. `input` is the source's.
   */
  fork?: Extract<ForkPlan, { ok: true }>;
  /**
   * Redrive an execution this driver ran to its end (engine/redrive.ts): its runs,
   * history and journal go on, from the plan's `Redriven` event and restored runs.
   */
  redrive?: { from: ExecutionResult; plan: RedrivePlan; redriveCount: number };
  /** `$$.Execution.Id` and `$$.StateMachine.Id` (default: local ARNs built from the names). */
  executionArn?: string;
  stateMachineArn?: string;
  roleArn?: string;
  /**
   * The shape of the history a new execution writes (core/history.ts): AWS's
   * (`HISTORY_FORMAT_AWS`, the default) or, with `"legacy"`, the shape Stepwise wrote
   * before it, as journals recorded then replay to.
   */
  historyFormat?: HistoryFormat | "legacy";
  /** Told of each transition's history events as they are recorded (progress displays). */
  onHistory?: (events: readonly HistoryEvent[]) => void;
  /**
   * `false`: keep neither the history nor the journal (the result's `history`,
   * `journal` and child executions' histories stay empty; event ids still count as
   * if kept), for a caller that reads only the outcome, as an EXPRESS execution
   * keeps no history (runtime/executions/express.ts). Default `true`. `onHistory`
   * is still told. A result kept so cannot be redriven.
   */
  keepHistory?: boolean;
  /**
   * Told before the real clock sleeps until the next timer (a Wait, a retry
   * backoff): the real sleep, and the execution time it stands for (`timeScale`).
   */
  onSleep?: (realMs: number, executionMs: number) => void;
}

export interface JournalEntry {
  runId: string;
  event: RunEvent;
}

export interface ExecutionResult {
  status: "SUCCEEDED" | "FAILED" | "ABORTED" | "TIMED_OUT";
  output?: Json;
  error?: string;
  cause?: string;
  history: HistoryEvent[];
  /** Every event fed to `step`, in order: replaying it rebuilds `runs`. */
  journal: JournalEntry[];
  runs: Map<string, RunState>;
  /**
   * A Distributed Map's child executions (one per item or batch of its Map Runs),
   * by ARN, each with the history of its own; the execution's `history` has none of it.
   */
  childExecutions: Map<string, ChildExecutionResult>;
  execution: ExecutionContext;
  /** Mock responses left unused, per state name. */
  unusedMocks: Record<string, number>;
  transitions: number;
}

/** A Map Run's child execution as the in-memory driver ran it. */
export interface ChildExecutionResult {
  arn: string;
  name: string;
  mapRunArn: string;
  status: RunState["status"];
  history: HistoryEvent[];
}

export class TransitionLimitExceeded extends Error {}

type Delivery = { runId: string; event: RunEventBody };

/** 128 random bits, hex: the seed of an execution's random stream. */
function randomSeed(): string {
  return randomHex(16);
}

function randomNonce(): string {
  const bytes = randomBytes(16);
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export async function runExecution(
  definition: StateMachineDefinition | Program,
  options: MemoryRunOptions = {},
): Promise<ExecutionResult> {
  const program = "scopes" in definition ? definition : compileProgram(definition);
  return new MemoryDriver(program, options).run();
}

class MemoryDriver {
  private readonly runs = new Map<string, RunState>();
  private readonly history: HistoryEvent[] = [];
  /** The histories of a Distributed Map's child executions, by ARN (their ids start at 1). */
  private readonly childExecutions = new Map<string, ChildExecutionResult>();
  private readonly journal: JournalEntry[] = [];
  private readonly queue = new Deque<Delivery>();
  private readonly timers = new TimerQueue();
  // The maps below are made when first needed: an execution without a Map, a
  // Parallel, a cancelled task or a fork (most Express runs) makes none of them.
  private cancelledTasks: Set<string> | undefined;
  /**
   * Per join prefix, the ends of its children so far: the output of a child that
   * succeeded, null for one that did not (`CollectResults`, `StopChildren`).
   */
  private joins: Map<string, Map<number, Json>> | undefined;
  /** Payloads stored by reference (core/payload-ref.ts), by hash. */
  private readonly payloads = new Map<string, Json>();
  /** Per join prefix, the inputs of the children its window starts later (`KeepInputs`). */
  private inputs: Map<string, { from: number; inputs: Json[] }> | undefined;
  private readonly mocks: Record<string, MockResponse[]>;
  private readonly execution: ExecutionContext;
  private readonly virtual: boolean;
  private readonly timeScale: number;
  private readonly nonce: () => string;
  private readonly maxTransitions: number;
  /** `keepHistory` (default true): the history and the journal are kept. */
  private readonly keep: boolean;
  /** Without `keep`, the events each Map Run child execution numbered so far, by ARN. */
  private childEvents: Map<string, number> | undefined;
  private now: number;
  private nextEventId = 1;
  private transitions = 0;
  private outcome: (RunOutcome & { timedOut?: boolean }) | undefined;
  private inFlight = 0;
  private wake: (() => void) | undefined;

  constructor(
    private readonly program: Program,
    private readonly options: MemoryRunOptions,
  ) {
    this.virtual = options.clock !== "real";
    this.timeScale = options.timeScale && options.timeScale > 0 ? options.timeScale : 1;
    this.now = options.startTime ? Date.parse(options.startTime) : Date.now();
    this.nonce = options.nonce ?? randomNonce;
    this.maxTransitions = options.maxTransitions ?? 5_000_000;
    this.keep = options.keepHistory !== false;
    this.mocks = options.mocks
      ? Object.fromEntries(Object.entries(options.mocks).map(([name, list]) => [name, [...list]]))
      : {};
    const name = options.executionName ?? `exec-${this.nonce().slice(0, 12)}`;
    const machine = options.stateMachineName ?? "StateMachine";
    const stateMachineId =
      options.stateMachineArn ?? `arn:aws:states:local:000000000000:stateMachine:${machine}`;
    this.execution = options.redrive?.from.execution ?? {
      executionId:
        options.executionArn ?? `arn:aws:states:local:000000000000:execution:${machine}:${name}`,
      name,
      startTime: this.isoNow(),
      input: options.input ?? {},
      stateMachineId,
      stateMachineName: machine,
      // Drawn here, as the Redis driver draws it, unless a test fixes it.
      seed: options.seed ?? randomSeed(),
      ...(options.roleArn !== undefined ? { roleArn: options.roleArn } : {}),
    };
    if (options.payloads) {
      const stored = this.payloads;
      this.execution = {
        ...this.execution,
        payloads: options.payloads,
        loadPayload: (hash) => stored.get(hash),
      };
    }
  }

  async run(): Promise<ExecutionResult> {
    if (this.options.redrive) this.redriven(this.options.redrive);
    else this.started();
    while (!this.outcome) {
      if (this.queue.length > 0) {
        const heavy = this.deliver(this.queue.shift()!);
        if (heavy) await heavy;
      } else if (this.inFlight > 0 && (!this.virtual || this.timers.size === 0)) {
        await new Promise<void>((resolve) => (this.wake = resolve));
      } else if (this.inFlight > 0) {
        // Virtual clock with a task in flight and a timer armed (a task timeout, a
        // heartbeat): give the task a real moment to answer, then let time jump.
        await new Promise<void>((resolve) => {
          const handle = setTimeout(resolve, 20);
          this.wake = () => {
            clearTimeout(handle);
            resolve();
          };
        });
        if (this.queue.length === 0 && this.inFlight > 0) await this.fireNextTimer();
      } else if (this.timers.size > 0) {
        await this.fireNextTimer();
      } else {
        throw new Error("execution is stuck: nothing to run, no timer armed, no task in flight");
      }
    }
    return this.result();
  }

  /** A new execution's first event (or a fork's, with its other runs). */
  private started(): void {
    const root = newRun(this.execution.executionId, "");
    this.runs.set(root.runId, root);
    const fork = this.options.fork;
    this.queue.push({
      runId: root.runId,
      event: fork
        ? { ...fork.root }
        : {
            type: "Started",
            input: this.execution.input,
            seed: this.execution.seed,
            ...(this.options.historyFormat !== "legacy"
              ? { historyFormat: this.options.historyFormat ?? HISTORY_FORMAT_AWS }
              : {}),
          },
    });
    for (const { run, event } of fork?.restored ?? []) this.park(run, event);
    const timeout = this.program.definition.TimeoutSeconds;
    if (timeout !== undefined) {
      this.timers.add({
        runId: root.runId,
        timerId: "execution-timeout",
        at: this.now + timeout * 1000,
      });
    }
  }

  /** An ended execution of this driver runs again (engine/redrive.ts). */
  private redriven(redrive: NonNullable<MemoryRunOptions["redrive"]>): void {
    const { from, plan, redriveCount } = redrive;
    for (const [id, run] of from.runs) this.runs.set(id, run);
    for (const [arn, child] of from.childExecutions ?? [])
      this.childExecutions.set(arn, { ...child, history: [...child.history] });
    this.history.push(...from.history);
    this.journal.push(...from.journal);
    this.nextEventId = from.history.length + 1;
    this.queue.push({
      runId: this.execution.executionId,
      event: { type: "Redriven", ...plan.point, redriveCount },
    });
    for (const { run, event } of plan.restored) this.park(run, event);
  }

  /**
   * A run a fork or a redrive creates stands idle with its `Restored` event until a
   * step wakes it (a `Continue` addressed to it), as the Redis driver creates it.
   */
  private parked: Map<string, RunEventBody> | undefined;

  private park(run: RunState, event: RunEventBody): void {
    this.runs.set(run.runId, run);
    (this.parked ??= new Map()).set(run.runId, { ...event });
  }

  private async fireNextTimer(): Promise<void> {
    const timer = this.timers.peek()!;
    if (!this.virtual && timer.at > this.now) {
      const realDelay = (timer.at - this.now) / this.timeScale;
      this.options.onSleep?.(realDelay, timer.at - this.now);
      await new Promise<void>((resolve) => {
        const handle = setTimeout(resolve, realDelay);
        this.wake = () => {
          clearTimeout(handle);
          resolve();
        };
      });
      if (this.queue.length > 0) return; // a task completed meanwhile; timers wait their turn
    }
    this.timers.pop();
    this.now = Math.max(this.now, timer.at);
    if (timer.timerId === "execution-timeout") {
      this.queue.push({
        runId: timer.runId,
        event: { type: "Stop", status: "TIMED_OUT", error: "States.Timeout", cause: "" },
      });
      return;
    }
    this.queue.push({ runId: timer.runId, event: { type: "TimerFired", timerId: timer.timerId } });
  }

  /** Steps one delivery; a promise only when the step went to the evaluation thread (heavy-steps.ts). */
  private deliver(item: Delivery): Promise<void> | undefined {
    const run = this.runs.get(item.runId);
    if (!run) return undefined;
    if (++this.transitions > this.maxTransitions) {
      throw new TransitionLimitExceeded(`more than ${this.maxTransitions} transitions`);
    }
    const event = item.event as RunEvent;
    event.time = this.isoNow();
    // A Map Run's child execution numbers the events of its own history.
    const child = this.childHistory(run);
    event.eventId = child ? this.childEventCount(child) + 1 : this.nextEventId;
    if (this.needsNonce(run, event)) event.nonce = this.nonce();
    // The delivery, now stamped, is the journal entry (one object per transition fewer).
    if (this.keep) this.journal.push(item as JournalEntry);
    const result = stepHere(this.program, this.execution, run, event);
    if (result instanceof Promise) return result.then((r) => this.stepped(r));
    this.stepped(result);
    return undefined;
  }

  private stepped(result: StepResult): void {
    this.runs.set(result.run.runId, result.run);
    const child = this.childHistory(result.run);
    if (child) {
      // A Map Run's child execution: its events go to its own history.
      if (this.keep) for (const h of result.history) child.history.push(h);
      else if (result.history.length > 0)
        (this.childEvents ??= new Map()).set(
          child.arn,
          this.childEventCount(child) + result.history.length,
        );
      child.status = result.run.status;
      for (const effect of result.effects) this.apply(effect, result.run);
      return;
    }
    if (this.keep) for (const h of result.history) this.history.push(h);
    if (result.history.length > 0) this.options.onHistory?.(result.history);
    this.nextEventId += result.history.length;
    for (const effect of result.effects) this.apply(effect, result.run);
  }

  /** The history a Map Run's child execution writes to, created with its first event. */
  private childHistory(run: RunState): ChildExecutionResult | undefined {
    const execution = run.childExecution;
    if (!execution) return undefined;
    let child = this.childExecutions.get(execution.arn);
    if (!child) {
      child = { ...execution, status: run.status, history: [] };
      this.childExecutions.set(execution.arn, child);
    }
    return child;
  }

  /** The events a Map Run's child execution has written so far. */
  private childEventCount(child: ChildExecutionResult): number {
    return this.keep ? child.history.length : (this.childEvents?.get(child.arn) ?? 0);
  }

  private isoCache = { at: Number.NaN, text: "" };

  private isoNow(): string {
    if (this.isoCache.at !== this.now)
      this.isoCache = { at: this.now, text: new Date(this.now).toISOString() };
    return this.isoCache.text;
  }

  /** Only a step that may schedule a `.waitForTaskToken` task needs fresh entropy. */
  private needsNonce(run: RunState, event: RunEvent): boolean {
    if (event.type !== "Continue" && event.type !== "TimerFired") return false;
    const frame = run.current;
    if (!frame) return false;
    const state = this.program.scopes.get(run.scope)?.states[frame.name];
    return state?.Type === "Task" && waitsForToken(state.Resource);
  }

  private apply(effect: Effect, run: RunState): void {
    switch (effect.type) {
      case "StorePayload":
        this.payloads.set(effect.hash, JSON.parse(effect.text) as Json);
        break;
      case "Continue": {
        const restored = this.parked?.get(effect.runId);
        if (restored) {
          this.parked!.delete(effect.runId);
          this.queue.push({ runId: effect.runId, event: restored });
        }
        // Born with the stamps `deliver` writes: journaled events stay compact objects.
        const event: RunEvent = { type: "Continue", time: "", eventId: 0 };
        this.queue.push({ runId: effect.runId, event });
        break;
      }
      case "RunTask":
        this.startTask(effect);
        break;
      case "RunChunk":
        this.startChunk(effect);
        break;
      case "ArmTimer":
        this.timers.add({ runId: effect.runId, timerId: effect.timerId, at: effect.at });
        break;
      case "CancelTimer":
        this.timers.remove(effect.runId, effect.timerId);
        break;
      case "CancelTask":
        (this.cancelledTasks ??= new Set()).add(effect.taskId);
        break;
      case "SpawnChildren":
        for (const child of effect.children) {
          this.runs.set(child.runId, childRun(effect.runId, child, run.lastEventId, run.seed));
          const input = child.input ?? this.keptInput(child.runId, child.index);
          this.queue.push({ runId: child.runId, event: { type: "Started", input } });
        }
        break;
      case "ContinueJoin":
        this.queue.push({
          runId: effect.runId,
          event: { type: "ContinueJoin", prefix: effect.prefix },
        });
        break;
      case "KeepInputs":
        (this.inputs ??= new Map()).set(effect.prefix, {
          from: effect.from,
          inputs: effect.inputs,
        });
        break;
      case "StopChildren":
        // Children the parent still counts as running may have ended meanwhile:
        // a stop would change nothing for them, so only running ones get one.
        for (let i = 0; i < effect.started; i++) {
          const id = `${effect.prefix}/${i}`;
          if (this.runs.get(id)?.status === "RUNNING")
            this.queue.unshift({ runId: id, event: { type: "Stop" } });
        }
        break;
      case "CollectResults": {
        const ended = this.joins?.get(effect.prefix);
        this.joins?.delete(effect.prefix);
        const outputs: Json[] = [];
        for (let i = 0; i < effect.total; i++) outputs.push(ended?.get(i) ?? null);
        // Next, before anything else: the step that records `<Kind>StateSucceeded`
        // follows the last child's end at once, as one step used to do both.
        this.queue.unshift({
          runId: effect.runId,
          event: { type: "ResultsCollected", prefix: effect.prefix, outputs },
        });
        break;
      }
      case "KeepOutputs": {
        const joins = (this.joins ??= new Map());
        let ended = joins.get(effect.prefix);
        if (!ended) joins.set(effect.prefix, (ended = new Map()));
        for (const [index, output] of effect.outputs)
          if (!ended.has(index)) ended.set(index, output);
        break;
      }
      case "RunEnded":
        if (effect.parent)
          this.childEnded(effect.runId, effect.parent, effect.outcome, effect.eventIds);
        else this.outcome = effect.outcome;
        break;
    }
  }

  /** The input kept for a window's later child (`KeepInputs`), handed over once. */
  private keptInput(runId: string, index: number): Json {
    const prefix = runId.slice(0, runId.lastIndexOf("/"));
    const kept = this.inputs?.get(prefix);
    if (!kept) return null;
    const k = index - kept.from;
    const input = kept.inputs[k] ?? null;
    // Released as children take them: a long Map holds only the inputs still to start.
    kept.inputs[k] = null;
    if (k === kept.inputs.length - 1) this.inputs!.delete(prefix);
    return input;
  }

  /** Keeps the child's output for its parent's join, and tells the parent once. */
  private childEnded(
    runId: string,
    parent: ParentLink,
    outcome: RunOutcome,
    eventIds: ChildEventIds | undefined,
  ): void {
    const prefix = runId.slice(0, runId.lastIndexOf("/"));
    const joins = (this.joins ??= new Map());
    let ended = joins.get(prefix);
    if (!ended) joins.set(prefix, (ended = new Map()));
    if (ended.has(parent.index)) return;
    ended.set(parent.index, outcome.status === "SUCCEEDED" ? outcome.output : null);
    const { output: _, ...told } = outcome as RunOutcome & { output?: Json };
    const event: RunEventBody = {
      type: "ChildEnded",
      childRunId: runId,
      index: parent.index,
      outcome: told,
    };
    if (eventIds) event.eventIds = eventIds;
    this.queue.push({ runId: parent.runId, event });
  }

  /**
   * A chunk of a Distributed Map's EXPRESS items: run in memory, as the worker runs
   * one (engine/drivers/express-chunk.ts), answered as the chunk task's result.
   */
  private startChunk(effect: Extract<Effect, { type: "RunChunk" }>): void {
    const inputs: Json[] = [];
    for (let k = 0; k < effect.count; k++) {
      const index = effect.from + k;
      inputs.push(this.keptInput(`${effect.prefix}/${index}`, index));
    }
    const options: ChunkRunOptions = { clock: this.virtual ? "virtual" : "real" };
    if (this.options.tasks) options.tasks = this.options.tasks;
    if (this.options.timeScale !== undefined) options.timeScale = this.options.timeScale;
    this.inFlight += 1;
    runChunkItems(effect.processor, effect.from, inputs, options)
      .then(
        (result): RunEventBody => ({
          type: "TaskSucceeded",
          taskId: effect.taskId,
          output: result as unknown as Json,
        }),
        (err: unknown): RunEventBody => ({
          type: "TaskFailed",
          taskId: effect.taskId,
          error: "States.Runtime",
          cause: String(err),
        }),
      )
      .then((event) => {
        if (!this.cancelledTasks?.has(effect.taskId))
          this.queue.push({ runId: effect.runId, event });
      })
      .finally(() => {
        this.inFlight -= 1;
        const wake = this.wake;
        this.wake = undefined;
        wake?.();
      });
  }

  private startTask(effect: Extract<Effect, { type: "RunTask" }>): void {
    const resolved = resolveTask(effect, this.mocks, this.options.tasks);
    // In-process, an activity is taken by "its worker" at once: AWS records ActivityStarted.
    if (taskKind(effect.resource) === "activity") {
      this.queue.push({
        runId: effect.runId,
        event: { type: "TaskStarted", taskId: effect.taskId },
      });
    }
    const settle = (event: RunEventBody): void => {
      if (this.cancelledTasks?.has(effect.taskId)) return;
      this.queue.push({ runId: effect.runId, event });
    };
    if (resolved.kind === "now") {
      settle(resolved.event);
      return;
    }
    this.inFlight += 1;
    resolved.promise
      .then(
        (event) => settle(event),
        (err: unknown) =>
          settle({
            type: "TaskFailed",
            taskId: effect.taskId,
            error: "States.TaskFailed",
            cause: String(err),
          }),
      )
      .finally(() => {
        this.inFlight -= 1;
        const wake = this.wake;
        this.wake = undefined;
        wake?.();
      });
  }

  private result(): ExecutionResult {
    const root = this.runs.get(this.execution.executionId)!;
    const outcome = this.outcome!;
    const unusedMocks: Record<string, number> = {};
    if (this.options.mocks)
      for (const [name, list] of Object.entries(this.mocks))
        if (list.length > 0) unusedMocks[name] = list.length;
    const status: ExecutionResult["status"] =
      root.status === "TIMED_OUT"
        ? "TIMED_OUT"
        : outcome.status === "SUCCEEDED" || outcome.status === "FAILED"
          ? outcome.status
          : "ABORTED";
    // One object, built whole (no spread of a shared base).
    const r: ExecutionResult = {
      history: this.history,
      journal: this.journal,
      runs: this.runs,
      childExecutions: this.childExecutions,
      execution: this.execution,
      unusedMocks,
      transitions: this.transitions,
      status,
    };
    if (status === "TIMED_OUT") r.error = "States.Timeout";
    else if (outcome.status === "SUCCEEDED") r.output = outcome.output;
    else if (outcome.status === "FAILED") {
      if (outcome.error !== undefined) r.error = outcome.error;
      if (outcome.cause !== undefined) r.cause = outcome.cause;
    }
    return r;
  }
}
