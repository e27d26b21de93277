import type { RunEvent } from "./core/events.js";
import type { HistoryEvent } from "./core/history.js";
import type { ExecutionContext, RunState } from "./core/run.js";
import type { Program } from "./program.js";
import { childRun, newRun, step } from "./step.js";

/**
 * Deterministic replay: feeds an execution's recorded events back through `step`
 * and rebuilds every run's state and the history. Any driver that records the
 * events it fed to `step` (its journal) can check itself against this: a
 * difference means something non-deterministic leaked into the engine.
 */
export function replay(
  program: Program,
  execution: ExecutionContext,
  journal: readonly { runId: string; event: RunEvent }[],
): { runs: Map<string, RunState>; history: HistoryEvent[] } {
  const runs = new Map<string, RunState>();
  const history: HistoryEvent[] = [];
  runs.set(execution.executionId, newRun(execution.executionId, ""));
  for (const { runId, event } of journal) {
    const run = runs.get(runId);
    if (!run) throw new Error(`replay: event for unknown run '${runId}'`);
    const result = step(program, execution, run, event);
    runs.set(runId, result.run);
    history.push(...result.history);
    for (const effect of result.effects) {
      if (effect.type !== "SpawnChildren") continue;
      for (const child of effect.children) {
        runs.set(
          child.runId,
          childRun(effect.runId, child, result.run.lastEventId, result.run.seed),
        );
      }
    }
  }
  return { runs, history };
}
