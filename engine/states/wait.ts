import type { WaitState } from "../core/definition.js";
import { guarded } from "../flow/failure.js";
import { io } from "../io/index.js";
import type { StateHandler } from "./handler.js";

/** Wait: a durable timer; the run sleeps in the driver, never in a process (ASL spec, "Wait State"). */
export const wait: StateHandler<WaitState> = {
  enter(ctx, state) {
    guarded(ctx, state, () => {
      const { until, output } = io(ctx, state).wait(ctx, state, ctx.frame.input);
      const timerId = ctx.newTimerId();
      // What it assigned goes into its exit's history event, steps later.
      const assigned = ctx.takeAssigned();
      ctx.setPhase(
        assigned === undefined
          ? { kind: "waiting", timerId, output }
          : { kind: "waiting", timerId, output, assigned },
      );
      ctx.emit({ type: "ArmTimer", runId: ctx.run.runId, timerId, at: until, purpose: "wait" });
    });
  },

  onTimer(ctx, state, timerId) {
    const phase = ctx.frame.phase;
    if (phase.kind !== "waiting" || phase.timerId !== timerId) return;
    ctx.restoreAssigned(phase.assigned);
    ctx.exit("Wait", state, phase.output);
  },
};
