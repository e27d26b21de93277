import type { QueryLanguage, State } from "./core/definition.js";
import type { Effect } from "./core/effects.js";
import type { RunEvent, RunOutcome } from "./core/events.js";
import type { DetailsArg, HistoryDetails } from "./core/history-details.js";
import {
  HISTORY_FORMAT_AWS,
  HistoryWriter,
  STATE_ENTERED,
  STATE_EXITED,
  type HistoryEvent,
  type HistoryEventType,
  type StateKind,
} from "./core/history.js";
import { StatesError } from "./core/errors.js";
import { payloadRef, rememberPayload, type PayloadRef } from "./core/payload-ref.js";
import type { Json, JsonObject } from "./core/json.js";
import { DeferredRandom } from "./core/random.js";
import {
  endRunState,
  type ExecutionContext,
  type Frame,
  type Phase,
  type RunState,
} from "./core/run.js";
import type { PathScope } from "./jsonpath/index.js";
import { queryLanguageOf, scopeOf, type CompiledScope, type Program } from "./program.js";

/**
 * Everything one call of `step` works with. The run is copied once on entry and
 * only the copy is changed, so `step` stays pure for its caller.
 */
export class StepContext {
  readonly run: RunState;
  readonly history: HistoryWriter;
  readonly effects: Effect[] = [];
  readonly scope: CompiledScope;
  /** The run's seeded random stream (seeded on the first draw: most steps draw nothing). */
  readonly random: DeferredRandom;
  /** `variables()` merged once per step; `assign` drops it. */
  private visible: Readonly<Record<string, Json>> | undefined;
  /** The variables assigned in this step, for the state's exit event (HISTORY_FORMAT_AWS). */
  private assigned: Record<string, Json> | undefined;

  constructor(
    readonly program: Program,
    readonly execution: ExecutionContext,
    run: RunState,
    readonly event: RunEvent,
  ) {
    const restored = restoredState(run, event);
    this.run = restored ?? { ...run };
    if (event.type === "Forked" && !event.run && !run.current && run.lastEventId === 0) {
      // The source's top level as it was at the fork point (see events.ts).
      this.run.variables = event.variables;
      this.run.random = event.random;
      this.run.serial = event.serial;
      if (event.seed !== undefined) this.run.seed = event.seed;
    }
    if (event.type === "Started" && event.seed !== undefined && run.seed === undefined) {
      this.run.seed = event.seed;
    }
    if (
      event.type === "Started" &&
      event.historyFormat === HISTORY_FORMAT_AWS &&
      !run.parent &&
      run.lastEventId === 0
    ) {
      this.run.historyFormat = HISTORY_FORMAT_AWS;
    }
    this.history = new HistoryWriter(event.eventId, this.run.lastEventId, event.time);
    this.scope = scopeOf(program, this.run.scope);
    // A fork's run goes on with the source's draws. (A `Forked` event without `run`,
    // journaled before forks carried it, started its stream over: replay keeps that.)
    this.random = new DeferredRandom(
      this.run.seed ?? execution.seed,
      this.run.runId,
      restored ? this.run.random : run.random,
    );
  }

  /** The run writes AWS's history (core/history.ts `HISTORY_FORMAT_AWS`). */
  get aws(): boolean {
    return this.run.historyFormat === HISTORY_FORMAT_AWS;
  }

  get now(): number {
    return Date.parse(this.event.time);
  }

  get frame(): Frame {
    const frame = this.run.current;
    if (!frame) throw new Error(`run ${this.run.runId} has no current state`);
    return frame;
  }

  state(name: string): State {
    const state = this.scope.states[name];
    if (!state) throw new Error(`state '${name}' is not in scope '${this.scope.pointer}'`);
    return state;
  }

  get currentState(): State {
    return this.state(this.frame.name);
  }

  language(state: State): QueryLanguage {
    return queryLanguageOf(this.program, state);
  }

  setPhase(phase: Phase): void {
    this.run.current = { ...this.frame, phase };
  }

  /** The variables visible here: enclosing scopes' (read-only) overlaid by this scope's. */
  variables(): Readonly<Record<string, Json>> {
    const run = this.run;
    this.visible ??= run.outer ? { ...run.outer, ...run.variables } : run.variables;
    return this.visible;
  }

  /** The context object `$$` (AWS "Context object"). */
  contextObject(extra?: { taskToken?: string }): JsonObject {
    const frame = this.run.current;
    // A Map Run's child execution is an execution of its own: `$$.Execution` names it.
    const child = this.run.childExecution;
    const ctx: JsonObject = {
      Execution: {
        Id: child?.arn ?? this.execution.executionId,
        Input: this.execution.input,
        Name: child?.name ?? this.execution.name,
        RoleArn: this.execution.roleArn ?? "arn:aws:iam::000000000000:role/stepwise",
        StartTime: this.execution.startTime,
        RedriveCount: 0,
      },
      StateMachine: { Id: this.execution.stateMachineId, Name: this.execution.stateMachineName },
    };
    if (frame) {
      ctx.State = {
        EnteredTime: frame.enteredTime,
        Name: frame.name,
        RetryCount: frame.retryCount ?? 0,
      };
    }
    if (extra?.taskToken !== undefined) ctx.Task = { Token: extra.taskToken };
    return ctx;
  }

  /** What paths read: `$` the input, `$$` the context object, `$name` variables (both built lazily). */
  pathScope(input: Json, extra?: { taskToken?: string }): PathScope {
    return new StepPathScope(this, input, extra);
  }

  /** Assigns variables in this scope (values computed against the pre-state variables). */
  assign(values: Record<string, Json>): void {
    this.run.variables = { ...this.run.variables, ...values };
    this.visible = undefined;
    if (this.aws) this.assigned = { ...this.assigned, ...values };
  }

  /**
   * The variables assigned in this step so far, which the state's exit event records;
   * taken away (a Wait assigns as it enters and exits in a later step: it keeps them
   * in its phase and hands them back with `restoreAssigned`).
   */
  takeAssigned(): Record<string, Json> | undefined {
    const assigned = this.assigned;
    this.assigned = undefined;
    return assigned;
  }

  restoreAssigned(assigned: Record<string, Json> | undefined): void {
    if (assigned !== undefined) this.assigned = { ...assigned, ...this.assigned };
  }

  /** `<Kind>StateExited`'s details: the state's name, its output and what it assigned. */
  exitDetails(name: string, output: string): HistoryDetails["PassStateExited"] {
    const assigned = this.takeAssigned();
    if (assigned === undefined || Object.keys(assigned).length === 0) return { name, output };
    const assignedVariables: Record<string, string> = {};
    for (const [key, value] of Object.entries(assigned))
      assignedVariables[key] = JSON.stringify(value);
    return { name, output, assignedVariables };
  }

  emit(effect: Effect): void {
    this.effects.push(effect);
  }

  /** Writes a history event of `type` with its details (core/history-details.ts); returns its id. */
  record<T extends HistoryEventType>(type: T, ...[details]: DetailsArg<T>): number {
    return this.history.add(type, details);
  }

  /**
   * Writes an event the run's next event does not follow (HISTORY_FORMAT_AWS: AWS's
   * `<Kind>StateSucceeded`, which the state's exit does not follow); else as `record`.
   */
  recordAside<T extends HistoryEventType>(type: T, ...[details]: DetailsArg<T>): number {
    return this.aws ? this.history.addAside(type, details) : this.history.add(type, details);
  }

  /** The run's next history event follows event `eventId` (HISTORY_FORMAT_AWS links). */
  follow(eventId: number): void {
    this.history.relink(eventId);
  }

  /** A serial number unique within this run, for task and timer ids. */
  nextSerial(): number {
    this.run.serial += 1;
    return this.run.serial;
  }

  /**
   * Moves the run into state `name` with `input` and writes `<Type>StateEntered`;
   * the state executes on the next `Continue`. `inputText` is the input's JSON
   * when the caller has it already (the previous state's output).
   */
  enter(name: string, input: Json, inputText?: string): void {
    this.place(name, input, inputText);
    this.emit({ type: "Continue", runId: this.run.runId });
  }

  /**
   * Moves the run into state `name` and writes `<Type>StateEntered`, but executes
   * nothing: the caller sets the phase the state goes on from (a redriven Map or
   * Parallel takes up its children, engine/flow/redrive-join.ts).
   */
  place(name: string, input: Json, inputText?: string): void {
    const after = this.history.lastId;
    const enteredEventId = this.record(STATE_ENTERED[this.state(name).Type], {
      name,
      input: inputText ?? jsonText(input),
    });
    this.run.current = {
      name,
      input,
      enteredTime: this.event.time,
      enteredEventId,
      phase: { kind: "entering" },
    };
    if (this.aws) this.run.current.enteredAfter = after;
  }

  /** Leaves the current state with `output`: follow `Next`, or end the run at `End`. */
  exit(kind: StateKind, state: State, output: Json): void {
    this.exitTo(kind, "Next" in state ? state.Next : undefined, output);
  }

  /** Leaves the current state for `next` (or ends the run when there is none). */
  exitTo(kind: StateKind, next: string | undefined, output: Json): void {
    let text = jsonText(output);
    if (this.goesByReference(text)) {
      output = this.storePayload(text, output) as unknown as Json;
      text = jsonText(output);
    }
    if (exceedsDataLimit(text)) {
      // AWS's wording (States.DataLimitExceeded); not catchable by States.ALL.
      throw new StatesError(
        "States.DataLimitExceeded",
        `The state/task '${this.frame.name}' returned a result with a size exceeding the maximum number of bytes service limit.`,
      );
    }
    this.record(STATE_EXITED[kind], this.exitDetails(this.frame.name, text));
    if (next !== undefined) this.enter(next, output, text);
    else this.endRun({ status: "SUCCEEDED", output }, text);
  }

  /** Whether this JSON text travels by reference (core/payload-ref.ts): never unless the execution says so. */
  goesByReference(text: string): boolean {
    const policy = this.execution.payloads;
    // Characters are at most 3 bytes each in UTF-8 (the same shortcut as the data limit).
    if (!policy || text.length * 3 <= policy.refOverBytes) return false;
    return new TextEncoder().encode(text).length > policy.refOverBytes;
  }

  /** Stores `text` (the JSON of `value`) once with the execution, and answers its reference. */
  storePayload(text: string, value: Json): PayloadRef {
    const { ref, hash } = payloadRef(text);
    this.emit({ type: "StorePayload", runId: this.run.runId, hash, text });
    rememberPayload(hash, value);
    return ref;
  }

  newTimerId(): string {
    return `${this.run.runId}#t${this.nextSerial()}`;
  }

  /**
   * Ends the run; the driver joins a child into its parent or finishes the execution.
   * `outputText` is the output's JSON when the caller has it already.
   */
  endRun(outcome: RunOutcome, outputText?: string): void {
    const run = this.run;
    delete run.current;
    endRunState(run, outcome);
    const last = this.history.lastId;
    // A Map Run's child execution ends its own history as a top level does.
    if (!run.parent || run.childExecution) this.recordExecutionEnd(outcome, outputText);
    else if (run.iteration !== undefined) this.recordIterationEnd(outcome);
    const effect: Effect = { type: "RunEnded", runId: run.runId, outcome };
    if (run.parent) {
      effect.parent = run.parent;
      // What the parent's next events follow in AWS's history (its last event, its end);
      // a child execution's events are in another history: the parent follows its own.
      if (this.aws && !run.childExecution) effect.eventIds = { last, end: this.history.lastId };
    }
    this.emit(effect);
  }

  private recordExecutionEnd(outcome: RunOutcome, outputText: string | undefined): void {
    if (outcome.status === "SUCCEEDED") {
      this.record("ExecutionSucceeded", { output: outputText ?? jsonText(outcome.output) });
    } else if (outcome.status === "FAILED") {
      this.record("ExecutionFailed", { error: outcome.error, cause: outcome.cause });
    }
  }

  private recordIterationEnd(outcome: RunOutcome): void {
    const type =
      outcome.status === "SUCCEEDED"
        ? "MapIterationSucceeded"
        : outcome.status === "FAILED"
          ? "MapIterationFailed"
          : "MapIterationAborted";
    this.record(type, { name: this.scope.owner ?? "", index: this.run.iteration ?? 0 });
  }

  /** AWS's prefix for runtime errors: names the state and its entered event. */
  causePrefix(): string {
    const frame = this.frame;
    return `An error occurred while executing the state '${frame.name}' (entered at the event id #${frame.enteredEventId}).`;
  }

  finish(): { run: RunState; history: HistoryEvent[]; effects: Effect[] } {
    this.run.random = this.random.counter;
    this.run.lastEventId = this.history.lastId;
    return { run: this.run, history: this.history.events, effects: this.effects };
  }
}

/**
 * The run a fork's first event carries (engine/fork.ts), for the fresh record the
 * driver made for it: the source's run as it was, renamed into the fork. The source's
 * event ids mean nothing in the fork's history, which begins with ExecutionForked.
 */
function restoredState(run: RunState, event: RunEvent): RunState | undefined {
  const carried = event.type === "Forked" || event.type === "Restored" ? event.run : undefined;
  if (!carried || carried.runId !== run.runId) return undefined;
  if (run.current || run.lastEventId !== 0 || run.status !== "RUNNING") return undefined;
  // A child redriven in place goes on in its own execution's history; a fork's other
  // runs wake after the top level's first event, ExecutionForked (id 1).
  if (event.type === "Restored" && event.resume.redrive) return { ...carried };
  return { ...carried, lastEventId: event.type === "Restored" ? 1 : 0 };
}

/**
 * A PathScope whose `$$` and variables are built on first read (most paths read
 * only `$`). A class, not getters on a literal: one is made per template.
 */
class StepPathScope implements PathScope {
  private contextObject: JsonObject | undefined;
  private visible: Readonly<Record<string, Json>> | undefined;

  constructor(
    private readonly ctx: StepContext,
    readonly input: Json,
    private readonly extra: { taskToken?: string } | undefined,
  ) {}

  get context(): JsonObject {
    this.contextObject ??= this.ctx.contextObject(this.extra);
    return this.contextObject;
  }

  get variables(): Readonly<Record<string, Json>> {
    this.visible ??= this.ctx.variables();
    return this.visible;
  }
}

/** AWS's payload limit: 256 KiB of UTF-8 per state input or output. */
export const DATA_LIMIT_BYTES = 256 * 1024;

export function exceedsDataLimit(text: string): boolean {
  // A UTF-16 unit encodes to at most 3 UTF-8 bytes: short texts need no encoding.
  if (text.length * 3 <= DATA_LIMIT_BYTES) return false;
  return new TextEncoder().encode(text).length > DATA_LIMIT_BYTES;
}

/** History carries inputs and outputs as JSON text, as AWS's history does. */
export function jsonText(value: Json): string {
  return JSON.stringify(value);
}
