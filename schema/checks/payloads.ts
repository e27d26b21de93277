import { isJsonObject, type Json, type JsonObject } from "../../engine/core/json.js";
import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { child } from "../pointer.js";
import { intrinsicProblem, looksLikeIntrinsic, pathProblem } from "../paths.js";
import { objectItems, type Model, type StateInfo } from "./model.js";

/**
 * Payload templates of JSONPath states (ASL spec, "Payload Template"): a key ending
 * in ".$" holds a path (`$…`, `$$…`, `$variable…`) or an intrinsic function call
 * (`States.X(…)`), evaluated at run time; any other key holds a literal. AWS refuses
 * a ".$" value that is neither ("The value for the field 'x.$' must be a valid
 * JSONPath or a valid intrinsic function call") and warns (NO_DOLLAR) when a literal
 * looks like a path that was meant to be evaluated.
 */
const TEMPLATE_FIELDS = [
  "Parameters",
  "ResultSelector",
  "ItemSelector",
  "Assign",
  "Credentials",
] as const;
const LOOKS_LIKE_PATH = /^\$\$?\.[\p{L}_[]/u;
const LOOKS_LIKE_CALL = /^States\.[A-Za-z0-9]+\(.*\)$/s;

export function checkPayloads(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const state of model.states) {
    if (state.language !== "JSONPath") continue;
    for (const [value, pointer] of templates(state)) checkTemplate(value, pointer, out);
    if (state.type === "Pass" && state.node.Result !== undefined) {
      checkStaticResult(state.node.Result, child(state.pointer, "Result"), out);
    }
  }
  return out;
}

function* templates(state: StateInfo): Generator<[Json, string]> {
  const { node, pointer } = state;
  for (const field of TEMPLATE_FIELDS) {
    if (node[field] !== undefined) yield [node[field], child(pointer, field)];
  }
  for (const [holder, field] of [
    ["ItemReader", "Parameters"],
    ["ResultWriter", "Parameters"],
    ["ItemBatcher", "BatchInput"],
  ] as const) {
    const value = node[holder];
    if (isJsonObject(value) && value[field] !== undefined)
      yield [value[field], child(pointer, holder, field)];
  }
  for (const list of ["Catch", "Choices"]) {
    for (const [i, entry] of objectItems(node[list])) {
      if (entry.Assign !== undefined) yield [entry.Assign, child(pointer, list, i, "Assign")];
    }
  }
}

function checkTemplate(root: Json, rootPointer: string, out: Diagnostic[]): void {
  const stack: [Json, string][] = [[root, rootPointer]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [value, pointer] = item;
    if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push([v, child(pointer, i)]));
      continue;
    }
    if (!isJsonObject(value)) continue;
    for (const key of Object.keys(value)) {
      const v = value[key]!;
      if (key.endsWith(".$") && key.length > 2) {
        checkDynamicField(value, key, v, pointer, out);
      } else if (typeof v === "string") {
        if (LOOKS_LIKE_PATH.test(v) || LOOKS_LIKE_CALL.test(v)) {
          out.push(
            diagnostic(
              "NO_DOLLAR",
              `'${key}' holds ${JSON.stringify(v)}, which looks like a ${LOOKS_LIKE_CALL.test(v) ? "function call" : "path"} but is passed as a literal; name the key '${key}.$' to evaluate it`,
              child(pointer, key),
            ),
          );
        }
      } else if (typeof v === "object" && v !== null) {
        stack.push([v, child(pointer, key)]);
      }
    }
  }
}

function checkDynamicField(
  container: JsonObject,
  key: string,
  value: Json,
  parent: string,
  out: Diagnostic[],
): void {
  const base = key.slice(0, -2);
  const pointer = child(parent, key);
  if (Object.prototype.hasOwnProperty.call(container, base)) {
    out.push(
      diagnostic(
        "DUPLICATE_PAYLOAD_FIELD",
        `Both '${base}' and '${key}' are set; they produce the same field '${base}', keep one`,
        pointer,
      ),
    );
  }
  const must = `The value for the field '${key}' must be a valid JSONPath or a valid intrinsic function call`;
  if (typeof value !== "string") {
    out.push(
      diagnostic(
        "INVALID_PATH_FIELD",
        `${must} (got a ${value === null ? "null" : typeof value})`,
        pointer,
      ),
    );
    return;
  }
  if (looksLikeIntrinsic(value)) {
    const problem = intrinsicProblem(value);
    if (problem !== undefined)
      out.push(diagnostic("INVALID_INTRINSIC_FUNCTION", `${must}: ${problem}`, pointer));
  } else if (value.startsWith("$")) {
    const problem = pathProblem(value);
    if (problem !== undefined)
      out.push(diagnostic("INVALID_JSONPATH", `${must}: ${problem}`, pointer));
  } else {
    out.push(
      diagnostic(
        "INVALID_PATH_FIELD",
        `${must} (got ${JSON.stringify(value)}); start a path with $, or drop '.$' from the key for a literal`,
        pointer,
      ),
    );
  }
}

/** AWS warns (PASS_RESULT_IS_STATIC) about ".$" keys in a Pass Result: Result is never evaluated. */
function checkStaticResult(root: Json, rootPointer: string, out: Diagnostic[]): void {
  const stack: [Json, string][] = [[root, rootPointer]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [value, pointer] = item;
    if (Array.isArray(value)) value.forEach((v, i) => stack.push([v, child(pointer, i)]));
    if (!isJsonObject(value)) continue;
    for (const [key, v] of Object.entries(value)) {
      const at = child(pointer, key);
      if (key.endsWith(".$")) {
        out.push(
          diagnostic(
            "PASS_RESULT_IS_STATIC",
            `Result is static, so '${key}' is not evaluated; use Parameters to compute values from paths`,
            at,
          ),
        );
      } else {
        stack.push([v, at]);
      }
    }
  }
}
