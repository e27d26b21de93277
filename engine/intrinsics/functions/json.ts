import type { Json, JsonObject } from "../../core/json.js";
import type { IntrinsicTable } from "./types.js";
import { booleanArg, intrinsicFailure, objectArg, stringArg } from "./types.js";

/** "Intrinsics for JSON data manipulation". */
export const JSON_FUNCTIONS: IntrinsicTable = {
  /** A blank string gives null (recorded: "" and " " both give null). */
  "States.StringToJson": {
    minArgs: 1,
    maxArgs: 1,
    evaluate(args, context) {
      const text = stringArg(args, 0, context);
      if (text.trim() === "") return null;
      try {
        return JSON.parse(text) as Json;
      } catch {
        intrinsicFailure(
          `Invalid arguments in ${context.name}: the string is not valid JSON: ${text}`,
        );
      }
    },
  },

  /** Compact JSON, no spaces (recorded: [1,2,"HelloWorld"]). */
  "States.JsonToString": {
    minArgs: 1,
    maxArgs: 1,
    evaluate: (args) => JSON.stringify(args[0] ?? null),
  },

  /**
   * Shallow merge: keys of the second object override those of the first. AWS
   * supports only the shallow mode, so the third argument must be false.
   */
  "States.JsonMerge": {
    minArgs: 3,
    maxArgs: 3,
    evaluate(args, context) {
      const left = objectArg(args, 0, context);
      const right = objectArg(args, 1, context);
      if (booleanArg(args, 2, context)) {
        intrinsicFailure(
          `Invalid arguments in ${context.name}: deep merging is not supported; the third argument must be false.`,
        );
      }
      // Spread defines own properties, so a "__proto__" key stays plain data.
      const merged: JsonObject = { ...left, ...right };
      return merged;
    },
  },
};
