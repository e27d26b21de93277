import { ARRAY_FUNCTIONS } from "./array.js";
import { ENCODING_FUNCTIONS } from "./encoding.js";
import { GENERIC_FUNCTIONS } from "./generic.js";
import { HASH_FUNCTIONS } from "./hash.js";
import { JSON_FUNCTIONS } from "./json.js";
import { MATH_FUNCTIONS } from "./math.js";
import { STRING_FUNCTIONS } from "./string.js";
import type { IntrinsicFunction } from "./types.js";
import { UUID_FUNCTIONS } from "./uuid.js";

/** The 18 intrinsic functions of ASL (JSONPath), keyed by their full name. */
export const INTRINSIC_FUNCTIONS: ReadonlyMap<string, IntrinsicFunction> = new Map(
  Object.entries({
    ...GENERIC_FUNCTIONS,
    ...ARRAY_FUNCTIONS,
    ...ENCODING_FUNCTIONS,
    ...HASH_FUNCTIONS,
    ...JSON_FUNCTIONS,
    ...MATH_FUNCTIONS,
    ...STRING_FUNCTIONS,
    ...UUID_FUNCTIONS,
  }),
);

export type { IntrinsicContext, IntrinsicFunction } from "./types.js";
