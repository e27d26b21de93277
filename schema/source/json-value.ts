import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { child } from "../pointer.js";
import { MAX_NESTING_DEPTH, MAX_SOURCE_DIAGNOSTICS } from "./limits.js";

/**
 * Checks that a JavaScript value (a definition passed as an object, or what YAML
 * produced) is plain JSON: finite numbers, plain objects and arrays, no cycles, no
 * functions, dates, byte arrays or `undefined`, and no deeper than the nesting
 * limit. Iterative, so a hostile 10,000-deep object cannot overflow the stack, and
 * run before ajv or any other recursive walk sees the value.
 */
export function checkJsonValue(root: unknown): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  // A depth-first walk with an explicit stack of open containers; pointers are
  // built from the stack only when a problem is reported.
  interface Frame {
    container: object;
    keys: string[] | undefined;
    length: number;
    next: number;
  }
  const frames: Frame[] = [];
  const onPath = new Set<object>();
  const pointer = (key?: string | number): string => {
    let out = "";
    for (const f of frames) out = child(out, f.keys ? f.keys[f.next - 1]! : f.next - 1);
    return key === undefined ? out : child(out, key);
  };
  const visit = (value: unknown): void => {
    const problem = scalarProblem(value);
    if (problem !== undefined) {
      if (problem !== "") diagnostics.push(diagnostic("NOT_JSON", problem, pointer()));
      return;
    }
    const container = value as object;
    if (frames.length >= MAX_NESTING_DEPTH) {
      diagnostics.push(
        diagnostic(
          "TOO_DEEPLY_NESTED",
          `Objects and arrays nest deeper than ${MAX_NESTING_DEPTH} levels here; flatten the definition`,
          pointer(),
        ),
      );
      return;
    }
    if (onPath.has(container)) {
      diagnostics.push(
        diagnostic(
          "NOT_JSON",
          "The value contains itself (a cycle); JSON cannot represent it",
          pointer(),
        ),
      );
      return;
    }
    onPath.add(container);
    const keys = Array.isArray(container) ? undefined : Object.keys(container);
    frames.push({
      container,
      keys,
      length: keys ? keys.length : (container as unknown[]).length,
      next: 0,
    });
  };

  visit(root);
  while (frames.length > 0 && diagnostics.length < MAX_SOURCE_DIAGNOSTICS) {
    const top = frames[frames.length - 1]!;
    if (top.next >= top.length) {
      frames.pop();
      onPath.delete(top.container);
      continue;
    }
    const key = top.keys ? top.keys[top.next] : top.next;
    top.next++;
    visit((top.container as Record<string | number, unknown>)[key!]);
  }
  return diagnostics;
}

/**
 * For a scalar: "" when it is fine JSON, a message when it is not. For a plain
 * object or array: undefined (the caller descends into it).
 */
function scalarProblem(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return "";
    case "number":
      return Number.isFinite(value) ? "" : `${value} is not a JSON number; use a finite number`;
    case "undefined":
      return "The value is undefined; JSON has no undefined (omit the field or use null)";
    case "object": {
      if (value === null) return "";
      if (Array.isArray(value)) return undefined;
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) return undefined;
      const name = (value as { constructor?: { name?: string } }).constructor?.name ?? "object";
      return `A ${name} is not JSON; use plain objects, arrays, strings, numbers, booleans and null`;
    }
    default:
      return `A ${typeof value} is not JSON; use plain objects, arrays, strings, numbers, booleans and null`;
  }
}
