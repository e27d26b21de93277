import { seededRandom } from "../../core/random.js";
import type { IntrinsicTable } from "./types.js";
import { integerArg, intrinsicFailure } from "./types.js";

/**
 * "Intrinsics for Math operations". Both functions round fractional arguments
 * to the nearest integer, as AWS documents for MathRandom and as the recordings
 * show for MathAdd (1.49 + 1.5 = 3).
 */
export const MATH_FUNCTIONS: IntrinsicTable = {
  /**
   * A random integer from start (inclusive) to end (exclusive). With a seed the
   * result depends only on the seed, so the same seed gives the same number;
   * without one it comes from the execution's replayable random stream.
   */
  "States.MathRandom": {
    minArgs: 2,
    maxArgs: 3,
    evaluate(args, context) {
      const start = integerArg(args, 0, context);
      const end = integerArg(args, 1, context);
      if (end <= start) {
        intrinsicFailure(
          `Invalid arguments in ${context.name}: the end (${end}) must be greater than the start (${start}).`,
        );
      }
      const draw =
        args.length === 3
          ? seededRandom(`States.MathRandom:${integerArg(args, 2, context)}`).next()
          : context.random.next();
      return start + Math.floor(draw * (end - start));
    },
  },

  "States.MathAdd": {
    minArgs: 2,
    maxArgs: 2,
    evaluate: (args, context) => integerArg(args, 0, context) + integerArg(args, 1, context),
  },
};
