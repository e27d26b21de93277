import { pathArgumentEnd, validateIntrinsic } from "../engine/intrinsics/index.js";
import { isReferencePath, parsePath } from "../engine/jsonpath/index.js";

/**
 * The validator's view of JSONPath and intrinsic-function syntax. Parsing itself is
 * the engine's (engine/jsonpath, engine/intrinsics), so that a path the validator
 * accepts is a path the interpreter can evaluate.
 */

/** Why `text` is not a JSONPath (`$…`, `$$…` or `$variable…`), or undefined when it is. */
export function pathProblem(text: string): string | undefined {
  try {
    parsePath(text);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Why `text` is not a reference path (ASL spec, "Reference Paths": only `.name`,
 * `['name']` and `[index]`; no wildcards, filters, slices or `..`), or undefined.
 */
export function referencePathProblem(text: string): string | undefined {
  const syntax = pathProblem(text);
  if (syntax !== undefined) return syntax;
  if (isReferencePath(text)) return undefined;
  return `'${text}' is not a reference path: it may only use .name, ['name'] and [index] steps (no *, .., filters or slices)`;
}

/** A string that is meant as an intrinsic function call ("States.Format(...)"). */
export function looksLikeIntrinsic(text: string): boolean {
  return text.trimStart().startsWith("States.");
}

const intrinsicCache = new Map<string, string | undefined>();
/** Bounded, so that generated definitions cannot grow it forever. */
const CACHE_LIMIT = 5_000;

/** Why `text` is not a valid intrinsic function call, or undefined when it is (cached). */
export function intrinsicProblem(text: string): string | undefined {
  if (intrinsicCache.has(text)) return intrinsicCache.get(text);
  const problem = validateIntrinsic(text) ?? illegalEscape(text);
  if (intrinsicCache.size >= CACHE_LIMIT) intrinsicCache.clear();
  intrinsicCache.set(text, problem);
  return problem;
}

/**
 * AWS, "Intrinsic functions" → "Reserved characters": inside a '…' literal only
 * \', \{, \} and \\ are escapes. AWS refuses any other backslash sequence when the
 * definition is created (localstack test_illegal_escapes, recorded against AWS:
 * "must be a valid JSONPath or a valid intrinsic function call"); the interpreter
 * keeps such backslashes as written, so the check lives here.
 */
function illegalEscape(text: string): string | undefined {
  let inLiteral = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (!inLiteral) {
      if (c === "'") inLiteral = true;
      // A path argument's quoted names are JSONPath's (`$['Test\\"Name']`): skip them.
      else if (c === "$") i = pathArgumentEnd(text, i) - 1;
      continue;
    }
    if (c === "'") {
      inLiteral = false;
    } else if (c === "\\") {
      const next = text[i + 1];
      if (next !== "'" && next !== "{" && next !== "}" && next !== "\\") {
        return `Invalid escape sequence '\\${next ?? ""}' in a string literal at position ${i}; only \\', \\{, \\} and \\\\ are escapes`;
      }
      i++;
    }
  }
  return undefined;
}
