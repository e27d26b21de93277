import type { JsonObject } from "../../engine/core/json.js";

/** A definition whose first state is StartAt. */
export function machine(states: JsonObject, extra: JsonObject = {}): JsonObject {
  return { StartAt: Object.keys(states)[0]!, States: states, ...extra };
}

export const LAMBDA = "arn:aws:lambda:us-east-1:123456789012:function:work";

/** One state that ends the execution. */
export const END: JsonObject = { Type: "Succeed" };
