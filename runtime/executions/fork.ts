import type { RunEvent } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import { forkPlan } from "../../engine/fork.js";
import type { step } from "../../engine/step.js";
import { pack } from "../store/codec.js";
import { RuntimeError } from "../contract/index.js";
import type { CreatedRun } from "../store/scripts/start-execution.js";
import { randomToken, shortId } from "../store/ids.js";

/**
 * Forking an execution (engine/fork.ts builds the fork from the source's journal):
 * the fork's first event and its other runs, ready for `ExecutionStore.start`, or
 * InvalidForkPoint naming the nearest event before that can be forked from.
 */
export interface ForkStart {
  forked: Extract<ReturnType<typeof forkPlan>, { ok: true }>["root"];
  /** The runs created with the fork. */
  restored: CreatedRun[];
}

type Program = Parameters<typeof step>[0];
type Context = Parameters<typeof step>[1];

export function forkStart(
  program: Program,
  context: Context,
  journal: readonly { runId: string; event: RunEvent }[],
  history: readonly HistoryEvent[],
  fromEventId: number,
  input: Json | undefined,
  forkId: string,
): ForkStart {
  const plan = forkPlan(program, context, journal, history, fromEventId, input, forkId);
  if (!plan.ok) {
    // A few candidates only: each check is a replay.
    const nearest = history[fromEventId - 1]
      ? history
          .slice(0, fromEventId - 1)
          .reverse()
          .filter((h) => h.type.endsWith("StateEntered"))
          .slice(0, 10)
          .find((h) => forkPlan(program, context, journal, history, h.id, undefined, forkId).ok)
      : undefined;
    throw new RuntimeError(
      "InvalidForkPoint",
      `Cannot fork here: ${plan.reason}` +
        (nearest ? `; the nearest event before it that is: ${nearest.id}` : ""),
    );
  }
  return {
    forked: plan.root,
    restored: plan.restored.map(({ run, event }) => ({
      run: shortId(run.runId),
      state: pack(JSON.stringify(run)),
      event: JSON.stringify(event),
    })),
  };
}

/** A fork's name when none is given (as a start's): its runs' ids are made from it first. */
export function forkName(): string {
  return randomToken()
    .replace(/[^A-Za-z0-9]/g, "")
    .slice(0, 20);
}
