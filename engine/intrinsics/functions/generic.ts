import type { IntrinsicContext, IntrinsicTable } from "./types.js";
import { intrinsicFailure, stringArg } from "./types.js";
import { javaString } from "./java-string.js";

/**
 * "Intrinsics for generic operations": States.Format. Each `{}` in the template
 * takes the next argument. In a literal template `\{` and `\}` are plain braces
 * (the parser already split it at the real placeholders); a template read from
 * a path has no escapes, so every `{}` there is a placeholder.
 */
function templateParts(template: string, context: IntrinsicContext): readonly string[] {
  const node = context.nodes[0];
  if (node?.kind === "literal" && node.formatParts !== undefined) return node.formatParts;
  return template.split("{}");
}

export const GENERIC_FUNCTIONS: IntrinsicTable = {
  "States.Format": {
    minArgs: 1,
    maxArgs: Infinity,
    evaluate(args, context) {
      const template = stringArg(args, 0, context);
      const parts = templateParts(template, context);
      const placeholders = parts.length - 1;
      const values = args.length - 1;
      if (placeholders !== values) {
        intrinsicFailure(
          `Invalid arguments in ${context.name}: the template has ${placeholders} placeholder(s) '{}' but ${values} value(s) were given.`,
        );
      }
      let out = parts[0]!;
      for (let i = 1; i < parts.length; i++) out += javaString(args[i]!) + parts[i]!;
      return out;
    },
  },
};
