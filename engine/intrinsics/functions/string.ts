import type { Json } from "../../core/json.js";
import type { IntrinsicTable } from "./types.js";
import { stringArg } from "./types.js";

/**
 * "Intrinsic for string operation": States.StringSplit. Every character of the
 * second argument is a delimiter and empty tokens are dropped, as Java's
 * StringTokenizer does (recorded: "This.is+a,test=string" split on ".+,="
 * gives five words; " " split on "," gives [" "]).
 */
function tokenize(text: string, delimiters: string): Json[] {
  const tokens: Json[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (delimiters.includes(text[i]!)) {
      if (i > start) tokens.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (text.length > start) tokens.push(text.slice(start));
  return tokens;
}

export const STRING_FUNCTIONS: IntrinsicTable = {
  "States.StringSplit": {
    minArgs: 2,
    maxArgs: 2,
    evaluate(args, context) {
      const text = stringArg(args, 0, context);
      const delimiters = stringArg(args, 1, context);
      return tokenize(text, delimiters);
    },
  },
};
