import { isJsonObject, type Json } from "../../engine/core/json.js";
import { CHOICE_OPERATORS } from "../asl/choice.js";
import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { fieldLabel } from "../describe.js";
import { child } from "../pointer.js";
import {
  intrinsicProblem,
  looksLikeIntrinsic,
  pathProblem,
  referencePathProblem,
} from "../paths.js";
import { fieldAt, objectItems, type Model, type StateInfo } from "./model.js";

/**
 * Path fields of JSONPath states (ASL spec, "Paths" and "Reference Paths"; AWS
 * "Input and output processing"):
 * - InputPath and OutputPath take any path;
 * - ResultPath takes a reference path into the state input: no filters or wildcards,
 *   and neither the context object ($$) nor variables ($name);
 * - ItemsPath, the …Path fields and Choice `Variable`/…Path operands take reference
 *   paths (any root);
 * - ErrorPath and CausePath take a reference path or an intrinsic function call.
 */
const REFERENCE_FIELDS: readonly (readonly string[])[] = [
  ["ItemsPath"],
  ["TimeoutSecondsPath"],
  ["HeartbeatSecondsPath"],
  ["SecondsPath"],
  ["TimestampPath"],
  ["MaxConcurrencyPath"],
  ["ToleratedFailurePercentagePath"],
  ["ToleratedFailureCountPath"],
  ["ItemBatcher", "MaxItemsPerBatchPath"],
  ["ItemBatcher", "MaxInputBytesPerBatchPath"],
  ["ItemReader", "ReaderConfig", "MaxItemsPath"],
];
const LOOKS_LIKE_PATH = /^\$\$?\.[\p{L}_[]/u;

export function checkPaths(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const state of model.states) {
    if (state.language !== "JSONPath") continue;
    const { node, pointer } = state;
    for (const field of ["InputPath", "OutputPath"]) {
      const value = node[field];
      if (typeof value === "string") reportPath(pathProblem(value), child(pointer, field), out);
    }
    checkResultPath(node.ResultPath, child(pointer, "ResultPath"), out);
    for (const [i, catcher] of objectItems(node.Catch)) {
      checkResultPath(catcher.ResultPath, child(pointer, "Catch", i, "ResultPath"), out);
    }
    for (const path of REFERENCE_FIELDS) {
      const value = fieldAt(node, path);
      if (typeof value === "string") reportReference(value, child(pointer, ...path), out);
    }
    for (const field of ["ErrorPath", "CausePath"]) {
      const value = node[field];
      if (typeof value !== "string") continue;
      const problem = looksLikeIntrinsic(value)
        ? intrinsicProblem(value)
        : referencePathProblem(value);
      if (problem !== undefined) {
        out.push(
          diagnostic(
            looksLikeIntrinsic(value) ? "INVALID_INTRINSIC_FUNCTION" : "INVALID_REFERENCE_PATH",
            `${field} must be a reference path or an intrinsic function call: ${problem}`,
            child(pointer, field),
          ),
        );
      }
    }
    if (state.type === "Fail") warnNoPath(state, out);
    for (const [i, rule] of objectItems(node.Choices))
      checkRule(rule, child(pointer, "Choices", i), out);
  }
  return out;
}

function checkResultPath(value: Json | undefined, pointer: string, out: Diagnostic[]): void {
  if (typeof value !== "string") return;
  if (!/^\$(?:$|[.[])/.test(value)) {
    out.push(
      diagnostic(
        "INVALID_REFERENCE_PATH",
        `ResultPath '${value}' must start with $ and point into the state's input (such as $.result); it cannot write to variables ($name) or the context object ($$)`,
        pointer,
      ),
    );
    return;
  }
  reportReference(value, pointer, out);
}

function reportReference(value: string, pointer: string, out: Diagnostic[]): void {
  const syntax = pathProblem(value);
  if (syntax !== undefined) {
    reportPath(syntax, pointer, out);
    return;
  }
  const problem = referencePathProblem(value);
  if (problem !== undefined) {
    out.push(
      diagnostic(
        "INVALID_REFERENCE_PATH",
        `${fieldLabel(pointer)} must be a reference path: ${problem}`,
        pointer,
      ),
    );
  }
}

function reportPath(problem: string | undefined, pointer: string, out: Diagnostic[]): void {
  if (problem !== undefined) {
    out.push(
      diagnostic(
        "INVALID_JSONPATH",
        `${fieldLabel(pointer)} is not a valid JSONPath: ${problem}`,
        pointer,
      ),
    );
  }
}

/** Variable and …Path operands of a rule and of the rules nested in And, Or and Not. */
function checkRule(root: Json, rootPointer: string, out: Diagnostic[]): void {
  const stack: [Json, string][] = [[root, rootPointer]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [rule, pointer] = item;
    if (!isJsonObject(rule)) continue;
    if (typeof rule.Variable === "string") {
      if (looksLikeIntrinsic(rule.Variable)) {
        out.push(
          diagnostic(
            "INVALID_REFERENCE_PATH",
            `Variable must be a reference path such as $.field, not an intrinsic function call (got ${JSON.stringify(rule.Variable)})`,
            child(pointer, "Variable"),
          ),
        );
      } else {
        reportReference(rule.Variable, child(pointer, "Variable"), out);
      }
    }
    for (const name of Object.keys(rule)) {
      const kind = CHOICE_OPERATORS[name];
      const operand = rule[name];
      if (kind === undefined || typeof operand !== "string") continue;
      if (kind === "path") reportReference(operand, child(pointer, name), out);
      else if (kind === "string" && LOOKS_LIKE_PATH.test(operand) && name !== "StringMatches") {
        out.push(
          diagnostic(
            "NO_PATH",
            `${name} compares with the literal text ${JSON.stringify(operand)}, which looks like a path; use ${name}Path to compare with the value at that path`,
            child(pointer, name),
          ),
        );
      }
    }
    if (Array.isArray(rule.And))
      rule.And.forEach((r, i) => stack.push([r, child(pointer, "And", i)]));
    if (Array.isArray(rule.Or)) rule.Or.forEach((r, i) => stack.push([r, child(pointer, "Or", i)]));
    if (rule.Not !== undefined) stack.push([rule.Not, child(pointer, "Not")]);
  }
}

function warnNoPath(state: StateInfo, out: Diagnostic[]): void {
  for (const field of ["Error", "Cause"]) {
    const value = state.node[field];
    if (typeof value === "string" && LOOKS_LIKE_PATH.test(value)) {
      out.push(
        diagnostic(
          "NO_PATH",
          `${field} holds ${JSON.stringify(value)}, which looks like a path but is used as literal text; use ${field}Path to read it from the input`,
          child(state.pointer, field),
        ),
      );
    }
  }
}
