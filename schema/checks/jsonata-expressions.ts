import { isJsonObject, type Json } from "../../engine/core/json.js";
import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { hasBrokenDelimiters, isJsonataTemplate, jsonataProblem } from "../jsonata.js";
import { child } from "../pointer.js";
import { objectItems, type Model, type StateInfo } from "./model.js";

/**
 * Every "{% %}" template a JSONata state evaluates must compile, wherever it sits:
 * directly in a field, or nested in the objects and arrays of Arguments, Output,
 * Assign and the like (AWS: "JSONata expressions can appear in string values within
 * objects and arrays at any nesting depth").
 */

/** State fields whose value (and everything inside it) JSONata evaluates. */
const EVALUATED_FIELDS = [
  "Arguments",
  "Output",
  "Assign",
  "Items",
  "ItemSelector",
  "TimeoutSeconds",
  "HeartbeatSeconds",
  "Seconds",
  "Timestamp",
  "MaxConcurrency",
  "ToleratedFailurePercentage",
  "ToleratedFailureCount",
  "Error",
  "Cause",
  "Credentials",
  "ItemBatcher",
] as const;

export function checkJsonataExpressions(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const state of model.states) {
    if (state.language !== "JSONata") continue;
    for (const [value, pointer] of evaluatedValues(state)) checkTree(value, pointer, out);
  }
  return out;
}

function* evaluatedValues(state: StateInfo): Generator<[Json, string]> {
  const { node, pointer } = state;
  for (const field of EVALUATED_FIELDS) {
    const value = node[field];
    if (value !== undefined) yield [value, child(pointer, field)];
  }
  for (const holder of ["ItemReader", "ResultWriter"]) {
    const value = node[holder];
    if (!isJsonObject(value)) continue;
    if (value.Arguments !== undefined) yield [value.Arguments, child(pointer, holder, "Arguments")];
    if (value.ReaderConfig !== undefined)
      yield [value.ReaderConfig, child(pointer, holder, "ReaderConfig")];
  }
  for (const list of ["Catch", "Choices"]) {
    for (const [i, entry] of objectItems(node[list])) {
      for (const field of ["Condition", "Output", "Assign"]) {
        const value = entry[field];
        if (value !== undefined) yield [value, child(pointer, list, i, field)];
      }
    }
  }
}

function checkTree(root: Json, rootPointer: string, out: Diagnostic[]): void {
  const stack: [Json, string][] = [[root, rootPointer]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [value, pointer] = item;
    if (typeof value === "string") {
      checkString(value, pointer, out);
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push([v, child(pointer, i)]));
    } else if (isJsonObject(value)) {
      for (const [k, v] of Object.entries(value)) stack.push([v, child(pointer, k)]);
    }
  }
}

function checkString(text: string, pointer: string, out: Diagnostic[]): void {
  if (isJsonataTemplate(text)) {
    const problem = jsonataProblem(text);
    if (problem !== undefined) {
      out.push(
        diagnostic(
          "INVALID_JSONATA",
          `The JSONata expression ${clip(text)} does not compile: ${problem}`,
          pointer,
        ),
      );
    }
  } else if (hasBrokenDelimiters(text)) {
    out.push(
      diagnostic(
        "INVALID_JSONATA",
        `${clip(text)} has only one of the delimiters; a JSONata expression is written "{% expression %}"`,
        pointer,
      ),
    );
  }
}

function clip(text: string): string {
  return JSON.stringify(text.length > 50 ? `${text.slice(0, 47)}...` : text);
}
