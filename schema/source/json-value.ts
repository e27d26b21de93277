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
  const onPath = new Set<object>();
  type Item = { value: unknown; pointer: string; depth: number } | { leave: object };
  const stack: Item[] = [{ value: root, pointer: "", depth: 0 }];

  while (stack.length > 0 && diagnostics.length < MAX_SOURCE_DIAGNOSTICS) {
    const item = stack.pop()!;
    if ("leave" in item) {
      onPath.delete(item.leave);
      continue;
    }
    const { value, pointer, depth } = item;
    const problem = scalarProblem(value);
    if (problem !== undefined) {
      if (problem !== "") diagnostics.push(diagnostic("NOT_JSON", problem, pointer));
      continue;
    }
    const container = value as object;
    if (depth >= MAX_NESTING_DEPTH) {
      diagnostics.push(
        diagnostic(
          "TOO_DEEPLY_NESTED",
          `Objects and arrays nest deeper than ${MAX_NESTING_DEPTH} levels here; flatten the definition`,
          pointer,
        ),
      );
      continue;
    }
    if (onPath.has(container)) {
      diagnostics.push(diagnostic("NOT_JSON", "The value contains itself (a cycle); JSON cannot represent it", pointer));
      continue;
    }
    onPath.add(container);
    stack.push({ leave: container });
    if (Array.isArray(container)) {
      for (let i = container.length - 1; i >= 0; i--) {
        stack.push({ value: container[i], pointer: child(pointer, i), depth: depth + 1 });
      }
    } else {
      const keys = Object.keys(container);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        stack.push({
          value: (container as Record<string, unknown>)[key],
          pointer: child(pointer, key),
          depth: depth + 1,
        });
      }
    }
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
