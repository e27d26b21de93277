import type { RedriveJoin, RedrivePoint, RunEvent, RunEventBody } from "./core/events.js";
import type { Json } from "./core/json.js";
import type { ExecutionContext, Frame, Join, RunState } from "./core/run.js";
import type { Program } from "./program.js";
import { replaySteps } from "./replay.js";
import { positionIndices } from "./states/map-express-chunks.js";
import { restoredRun } from "./step.js";

export type { RedrivePoint } from "./core/events.js";

/** Where a redriven execution takes up, and the children it redrives in place. */
export interface RedrivePlan {
  point: RedrivePoint;
  /** Runs to create with the redrive (idle: the `Redriven` step wakes them) and their first event. */
  restored: { run: RunState; event: Extract<RunEventBody, { type: "Restored" }> }[];
}

/**
 * Where an ended execution runs again (AWS's RedriveExecution, "continues the failed
 * execution from the unsuccessful step and uses the same input"): the journal
 * replayed through the pure `step` gives the top level's frame before the step that
 * ended it. A Map or Parallel state that ended while it waited for its children (or
 * collected their outputs) takes them up where they were (flow/redrive-join.ts): the
 * children that succeeded keep their outputs; the ones that failed or were aborted in
 * a state run again from that state, with their variables, in place (and so on down
 * a nested Map or Parallel); the ones stopped before they started start again.
 * Undefined when the top level ended before entering a state.
 */
export function redrivePlan(
  program: Program,
  execution: ExecutionContext,
  journal: readonly { runId: string; event: RunEvent }[],
): RedrivePlan | undefined {
  const root = execution.executionId;
  // The last state each run was in (a run that ended has none left in its record).
  const frames = new Map<string, Frame>();
  let runs: ReadonlyMap<string, RunState> = new Map();
  // The input each child was given (or kept for it).
  const inputs = new Map<string, Json>();
  const keptEnds = new Map<string, Json>();
  // Each Map Run's redrives so far (MapRunRedriven), and those that succeeded: a
  // state that fails after its Map Run succeeded (its ResultSelector…) does not redrive it.
  const mapRunRedrives = new Map<string, number>();
  const mapRunsSucceeded = new Set<string>();
  for (const replayed of replaySteps(program, execution, journal)) {
    runs = replayed.runs;
    const before = frames.get(replayed.runId)?.mapRunArn;
    for (const e of replayed.result.history) {
      if (e.type === "MapRunRedriven") {
        const details = (
          e as unknown as Record<string, { mapRunArn: string; redriveCount: number }>
        ).mapRunRedrivenEventDetails!;
        mapRunRedrives.set(details.mapRunArn, details.redriveCount);
      } else if (e.type === "MapRunSucceeded") {
        const arn = before ?? replayed.result.run.current?.mapRunArn;
        if (arn !== undefined) mapRunsSucceeded.add(arn);
      }
    }
    const current = replayed.result.run.current;
    if (current) frames.set(replayed.runId, current);
    for (const effect of replayed.result.effects) {
      if (effect.type === "SpawnChildren") {
        for (const child of effect.children) {
          if (child.input !== undefined) inputs.set(child.runId, child.input);
        }
      } else if (effect.type === "KeepOutputs") {
        // Ends the driver keeps without a child run (a redriven join's children that
        // had succeeded before): they count as the children's outputs.
        for (const [k, v] of effect.outputs) keptEnds.set(`${effect.prefix}/${k}`, v);
      } else if (effect.type === "KeepInputs") {
        // A redriven Map Run's chunks keep their items at positions of their own (Join
        // `chunks.indices`, set by this same step): each is the input of the Map's index.
        const phase = replayed.result.run.current?.phase;
        const chunks =
          phase?.kind === "children" && phase.join.prefix === effect.prefix
            ? phase.join.chunks
            : undefined;
        const at = chunks?.indices
          ? positionIndices(chunks, effect.from + effect.inputs.length).slice(effect.from)
          : undefined;
        effect.inputs.forEach((v, k) =>
          inputs.set(`${effect.prefix}/${at?.[k] ?? effect.from + k}`, v),
        );
      }
    }
  }
  const top = runs.get(root);
  const last = frames.get(root);
  if (!top || !last) return undefined;
  const restored: RedrivePlan["restored"] = [];

  /** Run `run` (`id` in the redrive) again from `frame`; its children under `id`'s next join. */
  const pointOf = (run: RunState, id: string, frame: Frame): RedrivePoint => {
    const join = joinOf(frame, `${id}/${run.serial + 1}`, id);
    return join
      ? { state: frame.name, input: frame.input, join }
      : { state: frame.name, input: frame.input };
  };

  /** The children of the frame's join as they ended; undefined when the frame waits on none. */
  /** The frame's Map Run, redriven with it (once more), unless it had succeeded. */
  const mapRunOf = (frame: Frame): RedriveJoin["mapRun"] => {
    const arn = frame.mapRunArn;
    if (arn === undefined || mapRunsSucceeded.has(arn)) return undefined;
    return { arn, redriveCount: (mapRunRedrives.get(arn) ?? 0) + 1 };
  };

  const joinOf = (frame: Frame, prefix: string, parent: string): RedriveJoin | undefined => {
    const phase = frame.phase;
    const mapRun = mapRunOf(frame);
    if (phase.kind === "collecting") {
      // Every child had ended and the join succeeded: the state failed on their
      // outputs (ResultSelector, ResultPath…). Nothing runs again; they are collected again.
      const kept: [number, Json][] = [];
      for (let i = 0; i < phase.total; i++) {
        const id = `${phase.prefix}/${i}`;
        const child = runs.get(id);
        kept.push([
          i,
          child?.status === "SUCCEEDED" ? (child.output ?? null) : (keptEnds.get(id) ?? null),
        ]);
      }
      const collecting: RedriveJoin = {
        total: phase.total,
        maxConcurrency: 0,
        outer: {},
        kept,
        rerun: [],
        started: phase.total,
        waiting: [],
      };
      if (mapRun) collecting.mapRun = mapRun;
      return collecting;
    }
    if (phase.kind !== "children") return undefined;
    const join = phase.join;
    if (join.chunks) return chunksOf(join, mapRun);
    const kept: [number, Json][] = [];
    const rerun: [number, Json][] = [];
    const redriven: number[] = [];
    let executions = false;
    for (let i = 0; i < join.started; i++) {
      const id = `${join.prefix}/${i}`;
      const child = runs.get(id);
      const frame = frames.get(id);
      if (child?.status === "SUCCEEDED") {
        kept.push([i, child.output ?? null]);
      } else if (!child && keptEnds.has(id)) {
        // Succeeded before an earlier redrive: its output is kept, it has no run.
        kept.push([i, keptEnds.get(id) ?? null]);
      } else if (child && frame) {
        // Failed or aborted in a state (or still being stopped there: the stop of the
        // old run cancels what it had in flight): redriven in place, under the new join.
        const { current: _stopping, ...ended } = child;
        const renamed: RunState = { ...ended, runId: `${prefix}/${i}` };
        if (child.parent) renamed.parent = { ...child.parent, runId: parent };
        // A Map Run's child execution counts its own redrives, as AWS's children do.
        if (renamed.childExecution) {
          const count = (renamed.childExecution.redriveCount ?? 0) + 1;
          renamed.childExecution = { ...renamed.childExecution, redriveCount: count };
        }
        const resume = { redrive: pointOf(child, renamed.runId, frame) };
        restored.push({
          run: restoredRun(renamed),
          event: { type: "Restored", run: renamed, resume },
        });
        redriven.push(i);
        if (renamed.childExecution) executions = true;
      } else {
        // Stopped before it started: from the start.
        rerun.push([i, inputs.get(id) ?? null]);
      }
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
    if (redriven.length > 0) plan.redriven = redriven;
    if (executions) plan.childExecutions = true;
    return withTolerance(plan, join, mapRun);
  };

  /**
   * A join of EXPRESS chunks: its items have no runs. Those whose output was kept
   * succeeded; every other one (failed, in a chunk cut short, or never handed out)
   * runs again in chunks, with the input the driver was given for it.
   */
  const chunksOf = (join: Join, mapRun: RedriveJoin["mapRun"]): RedriveJoin => {
    const kept: [number, Json][] = [];
    const rerun: [number, Json][] = [];
    for (let i = 0; i < join.total; i++) {
      const id = `${join.prefix}/${i}`;
      if (keptEnds.has(id)) kept.push([i, keptEnds.get(id) ?? null]);
      else rerun.push([i, inputs.get(id) ?? null]);
    }
    const plan: RedriveJoin = {
      total: join.total,
      maxConcurrency: join.maxConcurrency,
      outer: join.outer,
      kept,
      rerun,
      started: join.total,
      waiting: [],
      chunks: true,
    };
    return withTolerance(plan, join, mapRun);
  };

  return { point: pointOf(top, root, last), restored };
}

/** A redriven join keeps its Map Run and its tolerated failures. */
function withTolerance(plan: RedriveJoin, join: Join, mapRun: RedriveJoin["mapRun"]): RedriveJoin {
  if (mapRun) plan.mapRun = mapRun;
  if (join.toleratedFailureCount !== undefined) {
    plan.toleratedFailureCount = join.toleratedFailureCount;
  }
  if (join.toleratedFailurePercentage !== undefined) {
    plan.toleratedFailurePercentage = join.toleratedFailurePercentage;
  }
  return plan;
}
