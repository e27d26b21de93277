import type { PassState } from "../core/definition.js";
import { guarded } from "../flow/failure.js";
import { io } from "../io/index.js";
import type { StateHandler } from "./handler.js";

/** Pass: passes its input (or `Result`) to its output (ASL spec, "Pass State"). */
export const pass: StateHandler<PassState> = {
  enter(ctx, state) {
    guarded(ctx, state, () => {
      ctx.exit("Pass", state, io(ctx, state).pass(ctx, state, ctx.frame.input));
    });
  },
};
