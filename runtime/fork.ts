import type { RunEvent, RunEventBody } from "../engine/core/events.js";
import type { HistoryEvent } from "../engine/core/history.js";
import type { Json } from "../engine/core/json.js";
import type { RunState } from "../engine/core/run.js";
import { replaySteps } from "../engine/replay.js";
import { newRun, type step } from "../engine/step.js";
import { RuntimeError } from "./contract.js";

/**
 * Forking an execution: "try again from here, with a fixed input" (LangGraph's
 * time travel, Temporal's reset), without touching the source.
 *
 * The source's journal is replayed through the pure `step` up to the transition
 * that entered the state of history event `fromEventId`, which rebuilds the top
 * level exactly as it was there: its variables, random stream and id counter. The
 * fork is a new execution whose first event (`Forked`) carries that state and
 * enters the same state, with the same input or the one given; from there it runs
 * on its own, on the source's version.
 *
 * A fork point is a state the TOP LEVEL entered while no Map iteration or
 * Parallel branch was running: there, the whole execution is that one frame.
 * Elsewhere (inside an iteration, or beside running children) the execution's
 * state includes work in flight in other runs (tasks, timers, children's
 * results on their way), which a fork would have to re-issue; that is refused
 * with the nearest event that can be forked from.
 */
export interface ForkPoint {
  event: Extract<RunEventBody, { type: "Forked" }>;
}

export function forkPoint(
  program: Parameters<typeof step>[0],
  context: Parameters<typeof step>[1],
  journal: readonly { runId: string; event: RunEvent }[],
  history: readonly HistoryEvent[],
  fromEventId: number,
  input: Json | undefined,
): ForkPoint {
  const target = history[fromEventId - 1];
  if (!target) {
    throw invalid(`the source has no history event ${fromEventId} (it has ${history.length})`);
  }
  let runs = new Map<string, RunState>([[context.executionId, newRun(context.executionId, "")]]);
  let written = 0;
  let at: RunState | undefined;
  for (const replayed of replaySteps(program, context, journal)) {
    runs = replayed.runs;
    written += replayed.result.history.length;
    if (written >= fromEventId) {
      at = replayed.result.run;
      break;
    }
  }
  const root = runs.get(context.executionId)!;
  const entered = target.stateEnteredEventDetails?.name;
  const busy = [...runs.values()].some((r) => r.parent && r.status === "RUNNING");
  if (
    !target.type.endsWith("StateEntered") ||
    at !== root ||
    root.current?.enteredEventId !== fromEventId ||
    root.current.phase.kind !== "entering" ||
    typeof entered !== "string" ||
    busy
  ) {
    // A few candidates only: each check is a replay.
    const nearest = history
      .slice(0, fromEventId - 1)
      .reverse()
      .filter((h) => h.type.endsWith("StateEntered"))
      .slice(0, 10)
      .find((h) => forkable(h, history, program, context, journal));
    throw invalid(
      `event ${fromEventId} (${target.type}) is not a state the top level entered with nothing else running` +
        (nearest ? `; the nearest event before it that is: ${nearest.id}` : ""),
    );
  }
  const event: ForkPoint["event"] = {
    type: "Forked",
    sourceExecution: context.executionId,
    sourceEventId: fromEventId,
    state: entered,
    input: input === undefined ? root.current.input : input,
    variables: root.variables,
    random: root.random,
    serial: root.serial,
  };
  if (root.seed !== undefined) event.seed = root.seed;
  return { event };
}

/** Whether a fork from `h` would be accepted (for the error's suggestion). */
function forkable(
  h: HistoryEvent,
  history: readonly HistoryEvent[],
  program: Parameters<typeof step>[0],
  context: Parameters<typeof step>[1],
  journal: readonly { runId: string; event: RunEvent }[],
): boolean {
  try {
    forkPoint(program, context, journal, history, h.id, undefined);
    return true;
  } catch {
    return false;
  }
}

function invalid(message: string): RuntimeError {
  return new RuntimeError("InvalidForkPoint", `Cannot fork here: ${message}`);
}
