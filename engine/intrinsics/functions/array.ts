import type { Json } from "../../core/json.js";
import { jsonEqual } from "../../core/json.js";
import { canonicalJson } from "./canonical.js";
import type { IntrinsicTable } from "./types.js";
import { arrayArg, integerArg, intrinsicFailure } from "./types.js";

/**
 * "Intrinsics for arrays" (AWS Step Functions developer guide, Intrinsic functions).
 * ArrayRange is capped at 1000 items, as AWS documents.
 */
const MAX_RANGE_ITEMS = 1000;

export const ARRAY_FUNCTIONS: IntrinsicTable = {
  "States.Array": {
    minArgs: 0,
    maxArgs: Infinity,
    evaluate: (args) => args.slice(),
  },

  "States.ArrayPartition": {
    minArgs: 2,
    maxArgs: 2,
    evaluate(args, context) {
      const array = arrayArg(args, 0, context);
      const size = integerArg(args, 1, context);
      if (size <= 0) {
        intrinsicFailure(
          `Invalid arguments in ${context.name}: the chunk size must be a positive integer, but was ${size}.`,
        );
      }
      const chunks: Json[] = [];
      for (let i = 0; i < array.length; i += size) chunks.push(array.slice(i, i + size));
      return chunks;
    },
  },

  "States.ArrayContains": {
    minArgs: 2,
    maxArgs: 2,
    evaluate(args, context) {
      const array = arrayArg(args, 0, context);
      const value = args[1] ?? null;
      return array.some((item) => jsonEqual(item, value));
    },
  },

  /** `States.ArrayRange(1, 9, 2)` is `[1, 3, 5, 7, 9]`: the end is inclusive. */
  "States.ArrayRange": {
    minArgs: 3,
    maxArgs: 3,
    evaluate(args, context) {
      const start = integerArg(args, 0, context);
      const end = integerArg(args, 1, context);
      const step = integerArg(args, 2, context);
      if (step === 0)
        intrinsicFailure(`Invalid arguments in ${context.name}: the step must not be 0.`);
      const count =
        end === start || Math.sign(end - start) === Math.sign(step)
          ? Math.floor((end - start) / step) + 1
          : 0;
      if (count > MAX_RANGE_ITEMS) {
        intrinsicFailure(
          `Invalid arguments in ${context.name}: the range would have ${count} items; arrays cannot contain more than ${MAX_RANGE_ITEMS} items.`,
        );
      }
      const out: Json[] = new Array<Json>(count);
      for (let i = 0; i < count; i++) out[i] = start + i * step;
      return out;
    },
  },

  "States.ArrayGetItem": {
    minArgs: 2,
    maxArgs: 2,
    evaluate(args, context) {
      const array = arrayArg(args, 0, context);
      const index = integerArg(args, 1, context);
      if (index < 0 || index >= array.length) {
        intrinsicFailure(
          `Invalid arguments in ${context.name}: the index ${index} is out of bounds for an array of length ${array.length}.`,
        );
      }
      return array[index]!;
    },
  },

  "States.ArrayLength": {
    minArgs: 1,
    maxArgs: 1,
    evaluate: (args, context) => arrayArg(args, 0, context).length,
  },

  /** Keeps the first occurrence of each value, in order (structural equality). */
  "States.ArrayUnique": {
    minArgs: 1,
    maxArgs: 1,
    evaluate(args, context) {
      const array = arrayArg(args, 0, context);
      const seen = new Set<string>();
      const out: Json[] = [];
      for (const item of array) {
        const key = canonicalJson(item);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(item);
      }
      return out;
    },
  },
};
