import type { ChoiceState } from "../core/definition.js";
import { StatesError } from "../core/errors.js";
import { guarded } from "../flow/failure.js";
import { io } from "../io/index.js";
import type { StateHandler } from "./handler.js";

/** Choice: takes the `Next` of the first matching rule, else `Default` (ASL spec, "Choice State"). */
export const choice: StateHandler<ChoiceState> = {
  enter(ctx, state) {
    guarded(ctx, state, () => {
      const { next, output } = io(ctx, state).choose(ctx, state, ctx.frame.input);
      // AWS's cause for this error is literally "No Matches!".
      if (next === undefined) throw new StatesError("States.NoChoiceMatched", "No Matches!");
      ctx.exitTo("Choice", next, output);
    });
  },
};
