import type { FailState } from "../core/definition.js";
import { guarded } from "../flow/failure.js";
import { io } from "../io/index.js";
import type { StateHandler } from "./handler.js";

/**
 * Fail: ends the run with `Error`/`Cause` (or their `…Path` forms). AWS reports no
 * error name at all when neither is given, so both stay optional.
 */
export const fail: StateHandler<FailState> = {
  enter(ctx, state) {
    guarded(ctx, state, () => {
      const { error, cause } = io(ctx, state).fail(ctx, state, ctx.frame.input);
      const outcome: { status: "FAILED"; error?: string; cause?: string } = { status: "FAILED" };
      if (error !== undefined) outcome.error = error;
      if (cause !== undefined) outcome.cause = cause;
      ctx.endRun(outcome);
    });
  },
};
