import type { TimerPurpose } from "./core/effects.js";
import type { ForkResume, RunEvent, RunEventBody } from "./core/events.js";
import type { HistoryEvent } from "./core/history.js";
import type { Json } from "./core/json.js";
import type { ExecutionContext, Phase, RunState } from "./core/run.js";
import type { Program } from "./program.js";
import { replaySteps } from "./replay.js";
import { restoredRun } from "./step.js";

/**
 * Forking an execution: "try again from here, with a fixed input" (LangGraph's time
 * travel, Temporal's reset), without touching the source. Issue 15: "Forking from
 * inside a Map iteration or Parallel branch forks the whole execution at that point."
 *
 * A fork point is a state entered (a `<Type>StateEntered` event) by any run: the top
 * level, a Map iteration, a Parallel branch. The source's journal is replayed
 * through the pure `step` up to the transition that wrote it, which rebuilds every
 * run as it was there. The fork is a new execution holding the same runs, renamed
 * into it (run, task, timer and join ids begin with the execution's id): its top
 * level begins with `Forked`, every other run still part of the execution there
 * with `Restored`, each carrying its run and how it goes on (flow/fork-resume.ts).
 * The run that entered the fork point's state enters it again, with `input` if
 * given; the others take up what they were doing. From there the fork runs on its
 * own, on the source's version.
 */
export type ForkPlan =
  | {
      ok: true;
      /** The fork's first event, for its top level. */
      root: Extract<RunEventBody, { type: "Forked" }>;
      /** Its other runs: the record to create and its first event. */
      restored: { run: RunState; event: Extract<RunEventBody, { type: "Restored" }> }[];
    }
  | { ok: false; reason: string };

export function forkPlan(
  program: Program,
  execution: ExecutionContext,
  journal: readonly { runId: string; event: RunEvent }[],
  history: readonly HistoryEvent[],
  fromEventId: number,
  input: Json | undefined,
  /** The fork's execution id: the runs' ids are renamed into it. */
  forkId: string,
): ForkPlan {
  const target = history[fromEventId - 1];
  if (!target) {
    return {
      ok: false,
      reason: `the source has no history event ${fromEventId} (it has ${history.length})`,
    };
  }
  const root = execution.executionId;
  const timers = new Map<string, { at: number; purpose: TimerPurpose }>();
  const inputs = new Map<string, Json>();
  const kept = new Map<string, Json>();
  const joined = new Set<string>();
  let runs: ReadonlyMap<string, RunState> = new Map();
  let at: RunState | undefined;
  let written = 0;
  let steps = 0;
  for (const replayed of replaySteps(program, execution, journal)) {
    steps += 1;
    const { runId, result } = replayed;
    runs = replayed.runs;
    // What lives with the driver, not in the runs: timers, children's inputs, joined ends.
    const event = replayed.event;
    if (event.type === "ChildEnded") joined.add(event.childRunId);
    for (const effect of result.effects) {
      if (effect.type === "ArmTimer") timers.set(effect.timerId, effect);
      else if (effect.type === "CancelTimer") timers.delete(effect.timerId);
      else if (effect.type === "SpawnChildren") {
        for (const child of effect.children) {
          if (child.input !== undefined) inputs.set(child.runId, child.input);
        }
      } else if (effect.type === "KeepOutputs") {
        // Ends the driver keeps without a child run (a redriven join's children that
        // had succeeded before): they count as the children's outputs.
        for (const [k, v] of effect.outputs) kept.set(`${effect.prefix}/${k}`, v);
      } else if (effect.type === "KeepInputs") {
        effect.inputs.forEach((v, k) => inputs.set(`${effect.prefix}/${effect.from + k}`, v));
      }
    }
    written += result.history.length;
    if (written >= fromEventId) {
      at = runs.get(runId);
      break;
    }
  }
  const entered = target.stateEnteredEventDetails?.name;
  const top = runs.get(root);
  if (
    !target.type.endsWith("StateEntered") ||
    typeof entered !== "string" ||
    !at ||
    !top?.current ||
    // Entered by this very step: about to execute (or, entered by a redrive, already
    // waiting on its children again; the fork enters it again all the same).
    at.current?.enteredEventId !== fromEventId
  ) {
    return {
      ok: false,
      reason: `event ${fromEventId} (${target.type}) is not a state entered`,
    };
  }
  const rename = renamer(root, forkId);
  const restored: Extract<ForkPlan, { ok: true }>["restored"] = [];
  /** Why a run the fork would take up cannot be taken up, if one cannot. */
  let refused: string | undefined;
  // Whether the run that wrote the fork point is among the runs the fork takes up.
  let reached = false;

  /** How run `r` goes on; its live children are added to `restored` on the way. */
  const resumeOf = (r: RunState): ForkResume => {
    const frame = r.current;
    if (!frame) return r.status === "RUNNING" ? { start: inputs.get(r.runId) ?? null } : {};
    if (r === at) {
      reached = true;
      return { enter: input === undefined ? frame.input : input };
    }
    const phase = frame.phase;
    switch (phase.kind) {
      case "entering":
      case "task":
        return { enter: frame.input };
      case "waiting":
      case "backoff": {
        const timer = timers.get(phase.timerId);
        return {
          timers: [
            {
              timerId: rename(phase.timerId),
              at: timer?.at ?? 0,
              purpose: timer?.purpose ?? "wait",
            },
          ],
        };
      }
      case "collecting": {
        const ends: [number, Json][] = [];
        for (let i = 0; i < phase.total; i++) ends.push([i, outputOf(`${phase.prefix}/${i}`)]);
        return { kept: ends };
      }
      case "children": {
        const join = phase.join;
        // EXPRESS children ran in memory, in chunks (states/map-express-chunks.ts): their
        // outcomes are no runs, timers or kept ends the fork could take up.
        if (join.chunks) {
          refused = `event ${fromEventId} lies inside the EXPRESS Map Run of state '${frame.name}', whose items ran in memory and cannot be taken up: fork from that state's entry, or from an event after it`;
        }
        const ends: [number, Json][] = [];
        for (let i = 0; i < join.started; i++) {
          const id = `${join.prefix}/${i}`;
          const child = runs.get(id);
          if (joined.has(id) || kept.has(id)) ends.push([i, outputOf(id)]);
          else if (child) live(child);
          else pending(id);
        }
        const waiting: Json[] = [];
        for (let i = join.started; i < join.total; i++) {
          waiting.push(inputs.get(`${join.prefix}/${i}`) ?? null);
        }
        return { kept: ends, waiting };
      }
    }
  };
  const outputOf = (id: string): Json => {
    const child = runs.get(id);
    if (child?.status === "SUCCEEDED") return child.output ?? null;
    return kept.get(id) ?? null;
  };
  /**
   * A child a redrive created that had not taken its first step at the fork point
   * (its `Restored` event was still waiting): the fork creates it with that event.
   */
  const pending = (id: string): void => {
    const first = journal.slice(steps).find((j) => j.runId === id);
    if (first?.event.type !== "Restored") return;
    const run = renameRun(first.event.run, rename);
    restored.push({
      run: restoredRun(run),
      event: { type: "Restored", run, resume: first.event.resume },
    });
  };
  const live = (child: RunState): void => {
    const run = renameRun(child, rename);
    restored.push({
      run: restoredRun(run),
      event: { type: "Restored", run, resume: resumeOf(child) },
    });
  };

  const rootRun = renameRun(top, rename);
  const forked: Extract<ForkPlan, { ok: true }>["root"] = {
    type: "Forked",
    sourceExecution: root,
    sourceEventId: fromEventId,
    state: entered,
    input: input === undefined ? at.current.input : input,
    variables: top.variables,
    random: top.random,
    serial: top.serial,
    run: rootRun,
    resume: resumeOf(top),
  };
  if (top.seed !== undefined) forked.seed = top.seed;
  if (refused !== undefined) return { ok: false, reason: refused };
  if (!reached) {
    return {
      ok: false,
      reason: `event ${fromEventId} was written by a Map iteration or Parallel branch that was no longer part of the execution (it was being stopped)`,
    };
  }
  if (restored.length > 0) forked.resume!.wake = restored.map((r) => r.run.runId);
  return { ok: true, root: forked, restored };
}

/** Ids of runs, tasks, timers and joins begin with the execution's id. */
function renamer(from: string, to: string): (id: string) => string {
  return (id) =>
    id === from || id.startsWith(`${from}/`) || id.startsWith(`${from}#`)
      ? to + id.slice(from.length)
      : id;
}

/**
 * The run under the fork's ids. A Task's operation key goes: the fork's calls are
 * new operations (a service that deduplicates by key would answer the source's).
 */
function renameRun(run: RunState, rename: (id: string) => string): RunState {
  // A Distributed Map's Map Run and its child executions are the source's: the fork's
  // Map goes on without them (its items inline, in the fork's history), so nothing of
  // the fork's is ever written into the source's child executions.
  const { childExecution: _child, ...rest } = run;
  const renamed: RunState = { ...rest, runId: rename(run.runId) };
  if (run.parent) renamed.parent = { ...run.parent, runId: rename(run.parent.runId) };
  if (run.current) {
    const { operationKey: _key, mapRunArn: _mapRun, ...frame } = run.current;
    renamed.current = { ...frame, phase: renamePhase(run.current.phase, rename) };
  }
  return renamed;
}

function renamePhase(phase: Phase, rename: (id: string) => string): Phase {
  switch (phase.kind) {
    case "task": {
      const renamed: Extract<Phase, { kind: "task" }> = {
        ...phase,
        taskId: rename(phase.taskId),
        timerIds: phase.timerIds.map(rename),
      };
      if (phase.heartbeatTimerId) renamed.heartbeatTimerId = rename(phase.heartbeatTimerId);
      if (phase.expiryTimerId) renamed.expiryTimerId = rename(phase.expiryTimerId);
      return renamed;
    }
    case "waiting":
    case "backoff":
      return { ...phase, timerId: rename(phase.timerId) };
    case "children":
      return { ...phase, join: { ...phase.join, prefix: rename(phase.join.prefix) } };
    case "collecting":
      return { ...phase, prefix: rename(phase.prefix) };
    case "entering":
      return phase;
  }
}
