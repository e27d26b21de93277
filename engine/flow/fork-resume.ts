import type { ForkResume, RunOutcome } from "../core/events.js";
import type { StepContext } from "../step-context.js";
import { keepOutputs } from "./join.js";
import { redriveRun } from "./redrive-join.js";

/**
 * A run of a fork goes on from where the source's was (engine/fork.ts built
 * `resume` from the source's journal). The run's state is the source's already
 * (step-context.ts); what the source had in flight outside it is issued again:
 *  - a state about to execute, or a Task in flight, is entered again (the fork
 *    point's state with its new input): its task is scheduled anew, under a new
 *    operation key, its retry counters kept;
 *  - a Wait's or a retry's timer is armed again for the same instant;
 *  - a Map's or Parallel's join gets back its children's outputs so far and the
 *    inputs of those not started (the driver kept them, keyed by the source's
 *    join), and goes on starting them; a join that was collecting collects again;
 *  - a child that had not started starts; one that had ended without its parent
 *    taking its end in tells its parent again (its end is in the source's history,
 *    not written twice);
 *  - the top level wakes the others, so that their events follow ExecutionForked.
 */
export function resumeRun(ctx: StepContext, resume: ForkResume): void {
  const run = ctx.run;
  const runId = run.runId;
  const frame = run.current;
  // Behind their `Restored` event: an extra Continue only runs a state whose turn it is.
  for (const other of resume.wake ?? []) ctx.emit({ type: "Continue", runId: other });
  if (resume.redrive) {
    redriveRun(ctx, resume.redrive);
    return;
  }
  if (!frame) {
    if (run.status === "RUNNING") {
      ctx.enter(ctx.scope.startAt, resume.start ?? null);
      return;
    }
    const outcome: RunOutcome =
      run.status === "SUCCEEDED"
        ? { status: "SUCCEEDED", output: run.output ?? null }
        : run.status === "FAILED"
          ? { status: "FAILED", error: run.error, cause: run.cause }
          : { status: "ABORTED" };
    ctx.emit(
      run.parent
        ? { type: "RunEnded", runId, parent: run.parent, outcome }
        : { type: "RunEnded", runId, outcome },
    );
    return;
  }
  if (resume.enter !== undefined) {
    ctx.place(frame.name, resume.enter);
    const entered = ctx.frame;
    if (frame.retries) entered.retries = frame.retries;
    if (frame.retryCount) entered.retryCount = frame.retryCount;
    ctx.emit({ type: "Continue", runId });
    return;
  }
  for (const timer of resume.timers ?? []) {
    ctx.emit({ type: "ArmTimer", runId, ...timer });
  }
  const phase = frame.phase;
  if (phase.kind === "collecting") {
    if (resume.kept?.length) keepOutputs(ctx, phase.prefix, resume.kept);
    ctx.emit({ type: "CollectResults", runId, prefix: phase.prefix, total: phase.total });
    return;
  }
  if (phase.kind !== "children") return;
  const join = phase.join;
  if (resume.kept?.length) keepOutputs(ctx, join.prefix, resume.kept);
  if (resume.waiting?.length) {
    ctx.emit({
      type: "KeepInputs",
      runId,
      prefix: join.prefix,
      from: join.started,
      // A copy: the event is journaled as it is, and a driver may release the inputs it keeps.
      inputs: [...resume.waiting],
    });
  }
  // A batch may have been due (a ContinueJoin on its way): it starts if there is room.
  if (join.started < join.total) ctx.emit({ type: "ContinueJoin", runId, prefix: join.prefix });
}
