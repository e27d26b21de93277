import type { Json } from "../../core/json.js";
import type { IntrinsicContext, IntrinsicTable } from "./types.js";
import { intrinsicFailure, stringArg } from "./types.js";
import { decodeBase64, encodeBase64 } from "../digest/base64.js";

/**
 * "Intrinsics for data encoding and decoding". AWS limits both inputs to
 * 10,000 characters. Text is UTF-8 on both sides.
 */
const MAX_INPUT_CHARS = 10_000;

function limitedString(args: readonly Json[], context: IntrinsicContext): string {
  const text = stringArg(args, 0, context);
  if (text.length > MAX_INPUT_CHARS) {
    intrinsicFailure(
      `Invalid arguments in ${context.name}: the input string has ${text.length} characters; the limit is ${MAX_INPUT_CHARS}.`,
    );
  }
  return text;
}

export const ENCODING_FUNCTIONS: IntrinsicTable = {
  "States.Base64Encode": {
    minArgs: 1,
    maxArgs: 1,
    evaluate: (args, context) =>
      encodeBase64(new TextEncoder().encode(limitedString(args, context))),
  },

  "States.Base64Decode": {
    minArgs: 1,
    maxArgs: 1,
    evaluate(args, context) {
      const bytes = decodeBase64(limitedString(args, context));
      if (bytes === undefined) {
        intrinsicFailure(
          `Invalid arguments in ${context.name}: the input string is not valid base64.`,
        );
      }
      return new TextDecoder().decode(bytes);
    },
  },
};
