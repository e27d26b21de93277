import type { IntrinsicTable } from "./types.js";

/** "Intrinsic for unique ID generation": a version 4 UUID from the execution's random stream. */
export const UUID_FUNCTIONS: IntrinsicTable = {
  "States.UUID": {
    minArgs: 0,
    maxArgs: 0,
    evaluate: (_args, context) => context.random.uuid(),
  },
};
