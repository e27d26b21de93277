import type { RunEvent } from "./core/events.js";
import { unsliced } from "./core/step-slice.js";
import type { HistoryEvent } from "./core/history.js";
import type { ExecutionContext, RunState } from "./core/run.js";
import type { Program } from "./program.js";
import { childRun, newRun, restoredRun, step, type StepResult } from "./step.js";

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
): {
  runs: Map<string, RunState>;
  history: HistoryEvent[];
  /** A Distributed Map's child executions' histories, by ARN (none of it in `history`). */
  childHistories: Map<string, HistoryEvent[]>;
} {
  const history: HistoryEvent[] = [];
  const childHistories = new Map<string, HistoryEvent[]>();
  let runs = new Map<string, RunState>([
    [execution.executionId, newRun(execution.executionId, "")],
  ]);
  for (const replayed of replaySteps(program, execution, journal)) {
    const child = replayed.result.run.childExecution;
    let target = history;
    if (child) {
      target = childHistories.get(child.arn) ?? [];
      childHistories.set(child.arn, target);
    }
    target.push(...replayed.result.history);
    runs = replayed.runs;
  }
  return { runs, history, childHistories };
}

/**
 * The replay one journal entry at a time: after each step, the run that stepped,
 * the event, what the step returned, and every run as it stands then (one map,
 * updated in place). Fork and redrive (engine/fork.ts, engine/redrive.ts) read it.
 */
export function* replaySteps(
  program: Program,
  execution: ExecutionContext,
  journal: readonly { runId: string; event: RunEvent }[],
): Generator<{
  runId: string;
  event: RunEvent;
  result: StepResult;
  runs: Map<string, RunState>;
}> {
  const runs = new Map<string, RunState>();
  runs.set(execution.executionId, newRun(execution.executionId, ""));
  for (const { runId, event } of journal) {
    // A fork's Map iterations and Parallel branches begin with `Restored` (engine/fork.ts).
    const run = runs.get(runId) ?? (event.type === "Restored" ? restoredRun(event.run) : undefined);
    if (!run) throw new Error(`replay: event for unknown run '${runId}'`);
    // Replay finishes where it runs (a fork, a redrive, an audit check): its cost is
    // the journal's, and each step is one that already ran within its budget.
    const result = unsliced(() => step(program, execution, run, event));
    runs.set(runId, result.run);
    for (const effect of result.effects) {
      if (effect.type !== "SpawnChildren") continue;
      for (const child of effect.children) {
        runs.set(
          child.runId,
          childRun(effect.runId, child, result.run.lastEventId, result.run.seed),
        );
      }
    }
    yield { runId, event, result, runs };
  }
}
