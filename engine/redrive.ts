import type { RedriveJoin, RunEvent } from "./core/events.js";
import type { Json } from "./core/json.js";
import type { ExecutionContext, Frame, RunState } from "./core/run.js";
import type { Program } from "./program.js";
import { replaySteps } from "./replay.js";

/** Where a redriven execution takes up: the `Redriven` event's state, input and join. */
export interface RedrivePoint {
  state: string;
  input: Json;
  join?: RedriveJoin;
}

/**
 * Where an ended execution runs again (AWS's RedriveExecution, "continues the failed
 * execution from the unsuccessful step and uses the same input"): the journal
 * replayed through the pure `step` gives the top level's frame before the step that
 * ended it. A Map or Parallel state that ended while it waited for its children (or
 * collected their outputs) takes them up where they were: the children that
 * succeeded keep their outputs, the others run again with the input they had
 * (flow/redrive-join.ts). Undefined when the top level ended before entering a state.
 */
export function redrivePoint(
  program: Program,
  execution: ExecutionContext,
  journal: readonly { runId: string; event: RunEvent }[],
): RedrivePoint | undefined {
  const root = execution.executionId;
  let last: Frame | undefined;
  let runs: ReadonlyMap<string, RunState> = new Map();
  // The input each child of the top level's joins was given (or kept for it).
  const inputs = new Map<string, Json>();
  for (const replayed of replaySteps(program, execution, journal)) {
    runs = replayed.runs;
    if (replayed.runId !== root) continue;
    if (replayed.result.run.current) last = replayed.result.run.current;
    for (const effect of replayed.result.effects) {
      if (effect.type === "SpawnChildren") {
        for (const child of effect.children) {
          if (child.input !== undefined) inputs.set(child.runId, child.input);
        }
      } else if (effect.type === "KeepInputs") {
        effect.inputs.forEach((input, k) =>
          inputs.set(`${effect.prefix}/${effect.from + k}`, input),
        );
      }
    }
  }
  if (!last) return undefined;
  const join = joinOf(last, runs, inputs);
  return join
    ? { state: last.name, input: last.input, join }
    : { state: last.name, input: last.input };
}

/** The children of the frame's join as they ended; undefined when the frame waits on none. */
function joinOf(
  frame: Frame,
  runs: ReadonlyMap<string, RunState>,
  inputs: ReadonlyMap<string, Json>,
): RedriveJoin | undefined {
  const phase = frame.phase;
  if (phase.kind === "collecting") {
    // Every child had ended and the join succeeded: the state failed on their outputs
    // (ResultSelector, ResultPath…). Nothing runs again; the outputs are collected again.
    const kept: [number, Json][] = [];
    for (let i = 0; i < phase.total; i++) {
      const child = runs.get(`${phase.prefix}/${i}`);
      kept.push([i, child?.status === "SUCCEEDED" ? (child.output ?? null) : null]);
    }
    return {
      total: phase.total,
      maxConcurrency: 0,
      outer: {},
      kept,
      rerun: [],
      started: phase.total,
      waiting: [],
    };
  }
  if (phase.kind !== "children") return undefined;
  const join = phase.join;
  const kept: [number, Json][] = [];
  const rerun: [number, Json][] = [];
  for (let i = 0; i < join.started; i++) {
    const id = `${join.prefix}/${i}`;
    const child = runs.get(id);
    // Failed, aborted (stopped by a failing sibling or the execution's stop), or
    // still being stopped when the redrive came: all run again.
    if (child?.status === "SUCCEEDED") kept.push([i, child.output ?? null]);
    else rerun.push([i, inputs.get(id) ?? null]);
  }
  const waiting: Json[] = [];
  for (let i = join.started; i < join.total; i++) {
    waiting.push(inputs.get(`${join.prefix}/${i}`) ?? null);
  }
  const plan: RedriveJoin = {
    total: join.total,
    maxConcurrency: join.maxConcurrency,
    outer: join.outer,
    kept,
    rerun,
    started: join.started,
    waiting,
  };
  if (join.toleratedFailureCount !== undefined) {
    plan.toleratedFailureCount = join.toleratedFailureCount;
  }
  if (join.toleratedFailurePercentage !== undefined) {
    plan.toleratedFailurePercentage = join.toleratedFailurePercentage;
  }
  return plan;
}
