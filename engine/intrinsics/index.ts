/**
 * Intrinsic functions for JSONPath states (AWS Step Functions developer guide,
 * "Intrinsic functions"): parse, validate and evaluate `States.*(...)` calls.
 */
import { checkCall } from "./evaluate.js";
import { IntrinsicSyntaxError, parseIntrinsic } from "./parse.js";

export { compileIntrinsic, evaluateCall, evaluateIntrinsic } from "./evaluate.js";
export {
  isIntrinsicCall,
  parseIntrinsic,
  pathArgumentEnd,
  IntrinsicSyntaxError,
  MAX_NESTING,
} from "./parse.js";
export type { IntrinsicArg, IntrinsicCall } from "./parse.js";
export { INTRINSIC_FUNCTIONS } from "./functions/index.js";

/**
 * For the validator: a message saying what is wrong, or undefined when the call
 * parses, every function exists, has the right number of arguments, nesting
 * stays within 10 levels and every path argument is a valid path.
 */
export function validateIntrinsic(text: string): string | undefined {
  try {
    return checkCall(parseIntrinsic(text));
  } catch (error) {
    if (error instanceof IntrinsicSyntaxError) return error.message;
    throw error;
  }
}
