import type { SucceedState } from "../core/definition.js";
import { guarded } from "../flow/failure.js";
import { io } from "../io/index.js";
import type { StateHandler } from "./handler.js";

/** Succeed: ends the run successfully (ASL spec, "Succeed State"). */
export const succeed: StateHandler<SucceedState> = {
  enter(ctx, state) {
    guarded(ctx, state, () => {
      ctx.exit("Succeed", state, io(ctx, state).succeed(ctx, state, ctx.frame.input));
    });
  },
};
