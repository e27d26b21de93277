import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { child } from "../pointer.js";
import type { Model, StateInfo } from "./model.js";

/**
 * Map `Label` (AWS "Map state in Distributed mode" → Label): unique among the Map
 * states of a state machine, at most 40 characters, and no whitespace, brackets
 * < > { } [ ], wildcards ? *, special characters " # % \ ^ | ~ ` $ & , ; : /, or
 * control characters (U+0000-001F, U+007F-009F).
 */
const MAX_LABEL = 40;
const FORBIDDEN = new Set([...'<>{}[]?*"#%\\^|~`$&,;:/']);

export function checkMaps(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  const labels = new Map<string, StateInfo>();
  for (const state of model.states) {
    if (state.type !== "Map" || typeof state.node.Label !== "string") continue;
    const label = state.node.Label;
    const at = child(state.pointer, "Label");
    const problem = labelProblem(label);
    if (problem !== undefined)
      out.push(diagnostic("INVALID_LABEL_NAME", `Label ${JSON.stringify(label)} ${problem}`, at));
    const first = labels.get(label);
    if (first) {
      out.push(
        diagnostic(
          "DUPLICATE_LABEL_NAME",
          `Label ${JSON.stringify(label)} is already used by Map state '${first.name}'; labels must be unique`,
          at,
        ),
      );
    } else {
      labels.set(label, state);
    }
  }
  return out;
}

function labelProblem(label: string): string | undefined {
  if (label.length === 0) return "is empty; a Label needs 1 to 40 characters";
  if (label.length > MAX_LABEL)
    return `is ${label.length} characters long; a Label has at most ${MAX_LABEL}`;
  for (const c of label) {
    const code = c.codePointAt(0)!;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) {
      return `contains the control character U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
    }
    if (/\s/u.test(c)) return "contains whitespace";
    if (FORBIDDEN.has(c)) return `contains the character '${c}', which labels cannot use`;
  }
  return undefined;
}
