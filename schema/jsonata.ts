import { load as loadJsonata } from "./lazy/jsonata.js";

/**
 * JSONata templates (AWS "Transforming data with JSONata"): a string value that
 * starts with "{%" and ends with "%}" is an expression; any other string is a
 * literal. Compiling is the syntax check (the `jsonata` package parses when an
 * expression is created); results are cached because definitions repeat
 * expressions and the validator runs on every create and update.
 */
export function isJsonataTemplate(text: string): boolean {
  return text.length >= 4 && text.startsWith("{%") && text.endsWith("%}");
}

/** "{% … %}" delimiters present on one side only, which is almost surely a typo. */
export function hasBrokenDelimiters(text: string): boolean {
  return !isJsonataTemplate(text) && (text.startsWith("{%") || text.endsWith("%}"));
}

const cache = new Map<string, string | undefined>();
const CACHE_LIMIT = 5_000;

/** Why the expression inside a template does not compile, or undefined when it does. */
export function jsonataProblem(template: string): string | undefined {
  if (cache.has(template)) return cache.get(template);
  const problem = compileProblem(template.slice(2, -2));
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(template, problem);
  return problem;
}

function compileProblem(expression: string): string | undefined {
  if (expression.trim() === "") return "the expression is empty";
  try {
    loadJsonata()(expression);
    return undefined;
  } catch (error) {
    const e = error as { code?: string; position?: number; token?: unknown; message?: string };
    const where = typeof e.position === "number" ? ` at character ${e.position}` : "";
    const token =
      e.token !== undefined && !String(e.message ?? "").includes(String(e.token))
        ? ` near '${String(e.token)}'`
        : "";
    return `${e.message ?? String(error)}${token}${where}${e.code ? ` (${e.code})` : ""}`;
  }
}
