import { PREDEFINED_ERRORS } from "../../engine/core/errors.js";
import { closest } from "../describe.js";
import { diagnostic, listNames, type Diagnostic } from "../diagnostic.js";
import { child } from "../pointer.js";
import { objectItems, type Model } from "./model.js";

/**
 * Error names in Retry and Catch (ASL spec, "Error Handling" and "Error names"):
 * "States.ALL … MUST appear alone in its ErrorEquals array and MUST appear in the
 * last Retrier [Catcher]". Names starting with "States." are reserved for the
 * predefined errors, but AWS accepts unknown ones, so they only get a warning.
 */
const PREDEFINED: ReadonlySet<string> = new Set(PREDEFINED_ERRORS);

export function checkErrorNames(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const state of model.states) {
    for (const field of ["Retry", "Catch"] as const) {
      const entries = objectItems(state.node[field]);
      const total = Array.isArray(state.node[field]) ? state.node[field].length : 0;
      const kind = field === "Retry" ? "retrier" : "catcher";
      for (const [i, entry] of entries) {
        const names = Array.isArray(entry.ErrorEquals) ? entry.ErrorEquals : [];
        const at = child(state.pointer, field, i, "ErrorEquals");
        const hasAll = names.includes("States.ALL");
        if (hasAll && names.length > 1) {
          out.push(
            diagnostic(
              "STATES_ALL_NOT_ALONE",
              `${field}[${i}].ErrorEquals lists States.ALL with other names (${listNames(names.filter((n) => n !== "States.ALL").map(String))}); States.ALL must appear alone`,
              at,
            ),
          );
        }
        if (hasAll && i !== total - 1) {
          out.push(
            diagnostic(
              "STATES_ALL_NOT_LAST",
              `The ${kind} ${field}[${i}] matches States.ALL but is not the last ${kind}; move it to the end, the ${kind}s after it could never match`,
              at,
            ),
          );
        }
        names.forEach((name, j) => {
          if (typeof name !== "string" || !name.startsWith("States.") || PREDEFINED.has(name))
            return;
          // AWS's HTTP Task errors: States.Http.Socket and States.Http.StatusCode.<code>.
          if (name === "States.Http.Socket" || /^States\.Http\.StatusCode\.\d{3}$/.test(name))
            return;
          const guess = closest(name, PREDEFINED_ERRORS);
          out.push(
            diagnostic(
              "UNKNOWN_STATES_ERROR",
              `'${name}' is not a predefined error, so no state raises it and this ${kind} never matches it${guess ? `; did you mean '${guess}'?` : ` (predefined: ${listNames([...PREDEFINED_ERRORS], 16)})`}`,
              child(at, j),
            ),
          );
        });
      }
    }
  }
  return out;
}
