import type { Json } from "../core/json.js";
import type { Join } from "../core/run.js";
import type { StepContext } from "../step-context.js";

/**
 * Joins as Stepwise stored them before a join kept only counters: every child's
 * output so far (`results`), one character per child (`progress`: '.' not
 * started, 'r' running, 's' or 'f' ended) and the inputs of the children not
 * started yet. Executions survive deploys (DESIGN.md), so a parent found in such
 * a join goes on: its next step converts the join and hands the outputs so far
 * to the driver, which keeps them with the ends of the children still to come.
 */
interface LegacyJoin extends Omit<Join, "started" | "inputs"> {
  progress: string;
  results: Json[];
  pendingInputs?: Record<number, Json>;
}

/** Converts the current state's join if it is a legacy one (see above). */
export function upgradeLegacyJoin(ctx: StepContext): void {
  const phase = ctx.run.current?.phase;
  if (phase?.kind !== "children") return;
  if ("inputs" in phase.join) {
    // A join that kept its window's later inputs itself: the driver keeps them now.
    const { inputs, ...join } = phase.join as Join & { inputs: Json[] };
    ctx.setPhase({ kind: "children", join });
    keepInputs(ctx, join, inputs);
  }
  if (!("progress" in phase.join)) return;
  const { progress, results, pendingInputs, ...rest } = phase.join as unknown as LegacyJoin;
  // Children start in index order: the started ones are a prefix.
  const dot = progress.indexOf(".");
  const started = dot < 0 ? rest.total : dot;
  const outputs: [number, Json][] = [];
  for (let i = 0; i < started; i++) {
    if (progress[i] === "s") outputs.push([i, results[i] ?? null]);
    else if (progress[i] === "f") outputs.push([i, null]);
  }
  const join: Join = { ...rest, started };
  ctx.setPhase({ kind: "children", join });
  if (started < rest.total) {
    const inputs: Json[] = [];
    for (let i = started; i < rest.total; i++) inputs.push(pendingInputs?.[i] ?? null);
    keepInputs(ctx, join, inputs);
  }
  if (outputs.length > 0) keepOutputs(ctx, join.prefix, outputs);
}

/** The inputs of the children still to start (the last `inputs.length` of the join's). */
function keepInputs(ctx: StepContext, join: Join, inputs: Json[]): void {
  if (inputs.length === 0) return;
  const from = join.total - inputs.length;
  ctx.emit({ type: "KeepInputs", runId: ctx.run.runId, prefix: join.prefix, from, inputs });
}

/** A `ChildEnded` a legacy driver sent carries the child's output: the driver keeps it. */
export function legacyOutput(outcome: object): Json | undefined {
  return "output" in outcome ? (outcome.output as Json) : undefined;
}

export function keepOutputs(ctx: StepContext, prefix: string, outputs: [number, Json][]): void {
  ctx.emit({ type: "KeepOutputs", runId: ctx.run.runId, prefix, outputs });
}
