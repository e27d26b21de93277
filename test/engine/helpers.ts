import type { State, StateMachineDefinition } from "../../engine/core/definition.js";
import type { Effect } from "../../engine/core/effects.js";
import type { RunEvent, RunEventBody } from "../../engine/core/events.js";
import type { HistoryEvent, HistoryEventType } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import type { ExecutionContext, RunState } from "../../engine/core/run.js";
import {
  runExecution,
  type ExecutionResult,
  type MemoryRunOptions,
} from "../../engine/drivers/memory.js";
import { compileProgram, type Program } from "../../engine/program.js";
import { childRun, newRun, step, type StepResult } from "../../engine/step.js";

/** Every test execution starts at this instant, so history timestamps are predictable. */
export const T0 = "2024-01-01T00:00:00.000Z";
export const T0_MS = Date.parse(T0);

/** Runs `definition` on the virtual clock from T0 with a fixed name and seed. */
export function execute(
  definition: StateMachineDefinition,
  options: MemoryRunOptions = {},
): Promise<ExecutionResult> {
  return runExecution(definition, {
    startTime: T0,
    executionName: "exec",
    stateMachineName: "machine",
    seed: "seed",
    nonce: counterNonce(),
    ...options,
  });
}

/** A deterministic nonce source (`nonce-0`, `nonce-1`, …) for task tokens. */
export function counterNonce(prefix = "nonce"): () => string {
  let n = 0;
  return () => `${prefix}-${n++}`;
}

/** A one-state machine: `{StartAt: name, States: {[name]: state}}` (the state should End). */
export function single(state: State, name = "S"): StateMachineDefinition {
  return { StartAt: name, States: { [name]: state } };
}

/** A Pass state that ends its scope. */
export const endPass: State = { Type: "Pass", End: true };

/** The `…EventDetails` object of a history event (AWS puts at most one on each event). */
export function details(event: HistoryEvent): Record<string, Json | undefined> {
  for (const [key, value] of Object.entries(event)) {
    if (key.endsWith("EventDetails") && value && typeof value === "object") {
      return value as Record<string, Json | undefined>;
    }
  }
  return {};
}

export function ofType(history: HistoryEvent[], ...types: HistoryEventType[]): HistoryEvent[] {
  return history.filter((e) => types.includes(e.type));
}

export function types(history: HistoryEvent[]): HistoryEventType[] {
  return history.map((e) => e.type);
}

/** Milliseconds since T0 of a history event's timestamp. */
export function at(event: HistoryEvent): number {
  return Date.parse(event.timestamp) - T0_MS;
}

/** Seconds between consecutive events of the list (by timestamp). */
export function gapsSeconds(events: HistoryEvent[]): number[] {
  const gaps: number[] = [];
  for (let i = 1; i < events.length; i++) {
    gaps.push((Date.parse(events[i]!.timestamp) - Date.parse(events[i - 1]!.timestamp)) / 1000);
  }
  return gaps;
}

/** Freezes a value and everything reachable from it (Maps included), so any mutation throws. */
export function deepFreeze<T>(value: T, seen = new Set<unknown>()): T {
  if (value === null || typeof value !== "object" || seen.has(value)) return value;
  seen.add(value);
  if (value instanceof Map) {
    for (const [k, v] of value) {
      deepFreeze(k, seen);
      deepFreeze(v, seen);
    }
  }
  for (const key of Reflect.ownKeys(value)) {
    deepFreeze((value as Record<string | symbol, unknown>)[key], seen);
  }
  return Object.freeze(value);
}

/** Rejects when `promise` does not settle within `ms` of real time (guards against a hung driver). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let handle: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    handle = setTimeout(() => reject(new Error(`${what}: did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(handle));
}

/**
 * A hand-cranked driver around the pure `step`: the test decides which event each
 * run receives and when, so it can deliver stale, duplicate or out-of-order events.
 * `Continue` effects and spawned children are followed automatically by `settle`.
 */
export class Stepper {
  readonly program: Program;
  readonly execution: ExecutionContext;
  readonly runs = new Map<string, RunState>();
  readonly history: HistoryEvent[] = [];
  /** Every effect emitted so far, in order. */
  readonly effects: Effect[] = [];
  now = T0_MS;
  private nextEventId = 1;
  private nonces = counterNonce("token");
  /** Inputs a Map window keeps for its later children (`KeepInputs`), by join prefix. */
  private readonly kept = new Map<string, { from: number; inputs: Json[] }>();

  constructor(definition: StateMachineDefinition, input: Json = {}) {
    this.program = compileProgram(definition);
    this.execution = {
      executionId: "arn:aws:states:local:000000000000:execution:machine:exec",
      name: "exec",
      startTime: T0,
      input,
      stateMachineId: "arn:aws:states:local:000000000000:stateMachine:machine",
      stateMachineName: "machine",
      seed: "seed",
    };
    const root = newRun(this.execution.executionId, "");
    this.runs.set(root.runId, root);
  }

  get rootId(): string {
    return this.execution.executionId;
  }

  run(runId = this.rootId): RunState {
    const run = this.runs.get(runId);
    if (!run) throw new Error(`no run ${runId}`);
    return run;
  }

  /** The event `step` would receive, stamped with the clock and the next event id. */
  stamp(body: RunEventBody): RunEvent {
    return {
      ...body,
      time: new Date(this.now).toISOString(),
      eventId: this.nextEventId,
      nonce: this.nonces(),
    } as RunEvent;
  }

  /** Feeds one event to one run, records what came out, and returns the raw step result. */
  deliver(runId: string, body: RunEventBody): StepResult {
    const run = this.run(runId);
    const result = step(this.program, this.execution, run, this.stamp(body));
    this.runs.set(runId, result.run);
    this.history.push(...result.history);
    this.nextEventId += result.history.length;
    this.effects.push(...result.effects);
    for (const effect of result.effects) {
      if (effect.type !== "SpawnChildren") continue;
      for (const child of effect.children) {
        this.runs.set(child.runId, childRun(effect.runId, child, result.run.lastEventId));
      }
    }
    return result;
  }

  /**
   * Delivers `body`, then follows every `Continue` and starts every spawned child,
   * until only effects that need the outside world (tasks, timers, ends) remain.
   * Returns all effects produced on the way.
   */
  send(runId: string, body: RunEventBody): Effect[] {
    const out: Effect[] = [];
    const queue: { runId: string; body: RunEventBody }[] = [{ runId, body }];
    while (queue.length > 0) {
      const next = queue.shift()!;
      for (const effect of this.deliver(next.runId, next.body).effects) {
        out.push(effect);
        if (effect.type === "Continue")
          queue.push({ runId: effect.runId, body: { type: "Continue" } });
        if (effect.type === "KeepInputs") this.kept.set(effect.prefix, effect);
        if (effect.type === "SpawnChildren") {
          for (const child of effect.children) {
            const kept = this.kept.get(child.runId.slice(0, child.runId.lastIndexOf("/")));
            const input = child.input ?? kept?.inputs[child.index - kept.from] ?? null;
            queue.push({ runId: child.runId, body: { type: "Started", input } });
          }
        }
      }
    }
    return out;
  }

  start(): Effect[] {
    return this.send(this.rootId, { type: "Started", input: this.execution.input });
  }
}

export function effectsOf<T extends Effect["type"]>(
  effects: Effect[],
  type: T,
): Extract<Effect, { type: T }>[] {
  return effects.filter((e): e is Extract<Effect, { type: T }> => e.type === type);
}

export function only<T>(items: T[], what = "item"): T {
  if (items.length !== 1) throw new Error(`expected exactly one ${what}, got ${items.length}`);
  return items[0]!;
}
