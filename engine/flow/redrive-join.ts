import type { MapState } from "../core/definition.js";
import type { RedriveJoin, RedrivePoint } from "../core/events.js";
import type { Json } from "../core/json.js";
import { reopenRun, type Join } from "../core/run.js";
import { chunkSize, indexRanges, startChunks } from "../states/map-express-chunks.js";
import type { StepContext } from "../step-context.js";
import { childScopesOf, collectResults, keepOutputs, startChild } from "./join.js";

/**
 * An ended run (the top level, or a child redriven in place) runs again from the
 * state it ended in, with the input it had; a join it ended in takes up its children.
 */
export function redriveRun(ctx: StepContext, point: RedrivePoint): void {
  reopenRun(ctx.run);
  if (point.join) redriveJoin(ctx, point.state, point.input, point.join);
  else ctx.enter(point.state, point.input);
}

/**
 * A redriven Map or Parallel state takes up its children where they ended. AWS's
 * RedriveExecution: "For workflows that include an Inline Map or Parallel state,
 * RedriveExecution API action reschedules and redrives only the iterations and
 * branches that failed or aborted." The children that succeeded keep their outputs
 * (handed to the driver as the ends of the new join, `KeepOutputs`); the ones that
 * failed or were aborted in a state are redriven in place, from that state (as AWS
 * "continues the failed execution from the unsuccessful step"), nested Maps and
 * Parallels included; the ones stopped before they started start again. So the
 * state's output is what it would have been had every child succeeded the first
 * time, in index order.
 *
 * The children run under a new join (a new prefix): ends of the old one still on
 * their way (children that were being stopped) are stale for it and change nothing.
 * The children that start again do so at once, as they were running when the state
 * ended; the ones never started wait for the window (`MaxConcurrency`) as before.
 */
export function redriveJoin(ctx: StepContext, name: string, input: Json, plan: RedriveJoin): void {
  ctx.place(name, input);
  const state = ctx.currentState;
  if (state.Type === "Map") ctx.record("MapStateStarted", { length: plan.total });
  else ctx.record("ParallelStateStarted");
  if (plan.mapRun && state.Type === "Map") {
    // A Distributed Map's Map Run is redriven, not started anew (AWS: same ARN, a
    // MapRunRedriven in the parent's history where MapRunStarted was): its children
    // started again are its child executions, and it ends with MapRunSucceeded/Failed.
    const { arn, redriveCount } = plan.mapRun;
    ctx.run.current = { ...ctx.frame, mapRunArn: arn };
    ctx.record("MapRunRedriven", { mapRunArn: arn, redriveCount });
  }
  const runId = ctx.run.runId;
  const join: Join = {
    prefix: `${runId}/${ctx.nextSerial()}`,
    total: plan.total,
    started: plan.started,
    succeeded: plan.kept.length,
    failed: 0,
    maxConcurrency: plan.maxConcurrency,
    outer: plan.outer,
  };
  if (plan.toleratedFailureCount !== undefined) {
    join.toleratedFailureCount = plan.toleratedFailureCount;
  }
  if (plan.toleratedFailurePercentage !== undefined) {
    join.toleratedFailurePercentage = plan.toleratedFailurePercentage;
  }
  if (plan.kept.length > 0) keepOutputs(ctx, join.prefix, plan.kept);
  if (plan.chunks && state.Type === "Map") {
    redriveChunks(ctx, state, join, plan);
    return;
  }
  if (plan.waiting.length > 0) {
    ctx.emit({
      type: "KeepInputs",
      runId,
      prefix: join.prefix,
      from: plan.started,
      // A copy: the event is journaled as it is, and a driver may release the inputs it keeps.
      inputs: [...plan.waiting],
    });
  }
  const children = childScopesOf(ctx);
  const specs = plan.rerun.map(([index, given]) => startChild(ctx, join, children, index, given));
  if (specs.length > 0) ctx.emit({ type: "SpawnChildren", runId, children: specs });
  for (const index of plan.redriven ?? []) {
    // Created idle with the redrive, behind its `Restored` event: woken here.
    // A Map Run's child execution goes on in its own history: the parent records nothing.
    if (children.iterations && !plan.childExecutions) {
      ctx.record("MapIterationStarted", { name, index });
    }
    ctx.emit({ type: "Continue", runId: `${join.prefix}/${index}` });
  }
  if (join.succeeded === join.total) {
    // Every child had succeeded (the state failed on their outputs): collect them again.
    collectResults(ctx, join);
    return;
  }
  ctx.setPhase({ kind: "children", join });
  if (join.started < join.total) {
    ctx.emit({ type: "ContinueJoin", runId, prefix: join.prefix });
  }
}

/**
 * A redriven Map Run of EXPRESS children: the items that did not succeed run again in
 * chunks, as the first run's did (AWS: "When you redrive a Map Run, the Express child
 * workflows are rerun using the StartExecution API action", as new Express executions,
 * never iterations of the parent). The join counts the Map's every item, the kept ones
 * as started and succeeded; the driver keeps the items to run at positions 0.. and the
 * join maps positions back to the Map's indices (`chunks.indices`), so outputs, names
 * and a later redrive see the items as what they are.
 */
function redriveChunks(ctx: StepContext, state: MapState, join: Join, plan: RedriveJoin): void {
  const toRun: [number, Json][] = [...plan.rerun];
  plan.waiting.forEach((input, k) => toRun.push([plan.started + k, input]));
  toRun.sort((a, b) => a[0] - b[0]);
  const chunked: Join = {
    ...join,
    started: plan.kept.length,
    chunks: {
      size: chunkSize(join.maxConcurrency),
      running: [],
      indices: indexRanges(toRun.map(([index]) => index)),
      base: plan.kept.length,
    },
  };
  if (chunked.succeeded === chunked.total) {
    collectResults(ctx, chunked);
    return;
  }
  ctx.emit({
    type: "KeepInputs",
    runId: ctx.run.runId,
    prefix: chunked.prefix,
    from: 0,
    inputs: toRun.map(([, input]) => input),
  });
  ctx.setPhase({ kind: "children", join: startChunks(ctx, state, chunked) });
}
