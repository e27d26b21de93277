import { isJsonObject, type Json, type JsonObject } from "../engine/core/json.js";
import { diagnostic, listNames, type Diagnostic } from "./diagnostic.js";
import { child } from "./pointer.js";

/**
 * Known slips that otherwise surface as a cascade of unrelated diagnostics. Each is
 * reported once, in the words of the real mistake, and the definition is checked
 * further as if it were mended, so nothing else is reported about it:
 * - a definition-level field (`"QueryLanguage": "JSONata"`) written inside States,
 *   which otherwise reads as a state named QueryLanguage (~20 diagnostics);
 * - `"End": "true"`, a string, which also makes the state and the scope look
 *   endless;
 * - a Next, Default or StartAt naming a state with the wrong letter case, which
 *   also makes the state it meant unreachable.
 */
export interface Slips {
  diagnostics: Diagnostic[];
  /** The definition with the slips mended; the input itself is never changed. */
  mended: JsonObject;
}

/** Fields of a definition (or of a branch / item processor) rather than of a state. */
const SCOPE_FIELDS: ReadonlySet<string> = new Set([
  "QueryLanguage",
  "Comment",
  "StartAt",
  "TimeoutSeconds",
  "Version",
]);

export function findSlips(root: JsonObject): Slips {
  const diagnostics: Diagnostic[] = [];
  const mended = mendScope(root, "", diagnostics);
  return { diagnostics, mended };
}

function mendScope(scope: JsonObject, pointer: string, out: Diagnostic[]): JsonObject {
  const states = scope.States;
  if (!isJsonObject(states)) return scope;
  const top = pointer === "";
  const next: JsonObject = { ...scope };
  const kept: JsonObject = {};
  for (const [name, value] of Object.entries(states)) {
    if (SCOPE_FIELDS.has(name) && !isJsonObject(value)) {
      const where = top ? "the top level of the definition" : "its branch or item processor";
      out.push(
        diagnostic(
          "MISPLACED_FIELD",
          `${name} belongs at ${where}, next to StartAt and States, not inside States`,
          child(pointer, "States", name),
        ),
      );
      if (top && name === "QueryLanguage" && next.QueryLanguage === undefined) {
        next.QueryLanguage = value;
      }
      continue;
    }
    kept[name] = value;
  }
  const names = Object.keys(kept);
  const start = caseSlip(next.StartAt, names, "StartAt", child(pointer, "StartAt"), out);
  if (start !== undefined) next.StartAt = start;
  for (const [name, value] of Object.entries(kept)) {
    if (!isJsonObject(value)) continue;
    kept[name] = mendState(value, child(pointer, "States", name), names, out);
  }
  next.States = kept;
  return next;
}

function mendState(
  state: JsonObject,
  pointer: string,
  names: readonly string[],
  out: Diagnostic[],
): JsonObject {
  const next: JsonObject = { ...state };
  if (typeof next.End === "string" && /^(true|false)$/i.test(next.End.trim())) {
    const meant = next.End.trim().toLowerCase() === "true";
    out.push(
      diagnostic(
        "SCHEMA_VALIDATION_FAILED",
        `End must be the boolean ${meant}, not the string "${next.End}"; write "End": ${meant} without quotes`,
        child(pointer, "End"),
      ),
    );
    next.End = meant;
  }
  for (const field of ["Next", "Default"] as const) {
    const fixed = caseSlip(next[field], names, field, child(pointer, field), out);
    if (fixed !== undefined) next[field] = fixed;
  }
  for (const list of ["Choices", "Catch"] as const) {
    const items = next[list];
    if (!Array.isArray(items)) continue;
    next[list] = items.map((item, i) => {
      if (!isJsonObject(item)) return item;
      const at = child(pointer, list, i, "Next");
      const fixed = caseSlip(item.Next, names, `${list}[${i}].Next`, at, out);
      return fixed === undefined ? item : { ...item, Next: fixed };
    });
  }
  if (Array.isArray(next.Branches)) {
    next.Branches = next.Branches.map((branch, i) =>
      isJsonObject(branch) ? mendScope(branch, child(pointer, "Branches", i), out) : branch,
    );
  }
  for (const field of ["ItemProcessor", "Iterator"] as const) {
    const processor = next[field];
    if (isJsonObject(processor)) next[field] = mendScope(processor, child(pointer, field), out);
  }
  return next;
}

/**
 * A transition naming no state of its scope, but exactly one state when letter case
 * is ignored: state names are case-sensitive, so that one is what was meant.
 * Returns the state's real name after reporting the slip, else undefined.
 */
function caseSlip(
  target: Json | undefined,
  names: readonly string[],
  field: string,
  pointer: string,
  out: Diagnostic[],
): string | undefined {
  if (typeof target !== "string" || names.includes(target)) return undefined;
  const folded = target.toLowerCase();
  const matches = names.filter((n) => n.toLowerCase() === folded);
  if (matches.length !== 1) return undefined;
  const meant = matches[0]!;
  out.push(
    diagnostic(
      field === "StartAt" ? "INVALID_START_AT" : "MISSING_TRANSITION_TARGET",
      `${field} '${target}' names no state, but '${meant}' differs only in letter case; state names are case-sensitive, did you mean '${meant}'? (states here: ${listNames(names)})`,
      pointer,
    ),
  );
  return meant;
}
