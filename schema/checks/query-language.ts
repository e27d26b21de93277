import { isJsonObject } from "../../engine/core/json.js";
import { CHOICE_OPERATORS } from "../asl/choice.js";
import { diagnostic, listNames, type Diagnostic } from "../diagnostic.js";
import { isJsonataTemplate } from "../jsonata.js";
import { child } from "../pointer.js";
import { fieldAt, objectItems, type Model, type StateInfo } from "./model.js";

/**
 * Which fields each query language takes (AWS "Transforming data with JSONata":
 * JSONata states replace InputPath, Parameters, ResultSelector, ResultPath and
 * OutputPath with Arguments and Output, the …Path fields with "{% %}" values, and
 * Choice comparisons with Condition). "If JSONata is specified at the top level,
 * JSONPath cannot be used in the state machine definition" (AWS CDK docs,
 * QueryLanguage; AWS: "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata'
 * for whole state machine").
 */

/** JSONPath-only state fields, and what a JSONata state uses instead. */
const JSONPATH_ONLY: Record<string, string> = {
  InputPath: "read $states.input in Arguments or Output instead",
  OutputPath: "use Output instead",
  Parameters: "use Arguments instead",
  ResultSelector: "use Output (with $states.result) instead",
  ResultPath: "use Output (with $states.result) instead",
  Result: "use Output instead",
  ItemsPath: "use Items instead",
  TimeoutSecondsPath: 'use TimeoutSeconds with a "{% ... %}" expression instead',
  HeartbeatSecondsPath: 'use HeartbeatSeconds with a "{% ... %}" expression instead',
  SecondsPath: 'use Seconds with a "{% ... %}" expression instead',
  TimestampPath: 'use Timestamp with a "{% ... %}" expression instead',
  MaxConcurrencyPath: 'use MaxConcurrency with a "{% ... %}" expression instead',
  ToleratedFailurePercentagePath:
    'use ToleratedFailurePercentage with a "{% ... %}" expression instead',
  ToleratedFailureCountPath: 'use ToleratedFailureCount with a "{% ... %}" expression instead',
  ErrorPath: 'use Error with a "{% ... %}" expression instead',
  CausePath: 'use Cause with a "{% ... %}" expression instead',
};

/** JSONata-only state fields, and what a JSONPath state uses instead. */
const JSONATA_ONLY: Record<string, string> = {
  Arguments: "use Parameters instead",
  Output: "use ResultSelector, ResultPath or OutputPath instead",
  Items: "use ItemsPath instead",
};

/** Fields whose value may be a "{% %}" expression only in JSONata states. */
const COMPUTED_VALUES: readonly (readonly string[])[] = [
  ["TimeoutSeconds"],
  ["HeartbeatSeconds"],
  ["Seconds"],
  ["Timestamp"],
  ["MaxConcurrency"],
  ["ToleratedFailurePercentage"],
  ["ToleratedFailureCount"],
  ["ItemSelector"],
  ["ItemBatcher", "MaxItemsPerBatch"],
  ["ItemBatcher", "MaxInputBytesPerBatch"],
  ["ItemBatcher", "BatchInput"],
  ["ItemReader", "ReaderConfig", "MaxItems"],
];

/** Fields nested in ItemReader, ResultWriter and ItemBatcher: [holder, field, hint]. */
type NestedRule = readonly [readonly string[], string, string];
const NESTED_JSONPATH_ONLY: readonly NestedRule[] = [
  [["ItemReader"], "Parameters", "use Arguments instead"],
  [["ResultWriter"], "Parameters", "use Arguments instead"],
  [["ItemReader", "ReaderConfig"], "MaxItemsPath", 'use MaxItems with "{% ... %}" instead'],
  [["ItemBatcher"], "MaxItemsPerBatchPath", 'use MaxItemsPerBatch with "{% ... %}" instead'],
  [
    ["ItemBatcher"],
    "MaxInputBytesPerBatchPath",
    'use MaxInputBytesPerBatch with "{% ... %}" instead',
  ],
];
const NESTED_JSONATA_ONLY: readonly NestedRule[] = [
  [["ItemReader"], "Arguments", "use Parameters instead"],
  [["ResultWriter"], "Arguments", "use Parameters instead"],
];

const RULE_JSONPATH_FIELDS = ["Variable", "And", "Or", "Not", ...Object.keys(CHOICE_OPERATORS)];

export function checkQueryLanguages(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (model.topLanguage === "JSONata") {
    const downgrade = (pointer: string): void => {
      out.push(
        diagnostic(
          "QUERY_LANGUAGE_DOWNGRADE",
          "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine; remove it or set JSONata",
          child(pointer, "QueryLanguage"),
        ),
      );
    };
    for (const scope of model.scopes)
      if (scope.pointer !== "" && scope.node.QueryLanguage === "JSONPath") downgrade(scope.pointer);
    for (const state of model.states)
      if (state.node.QueryLanguage === "JSONPath") downgrade(state.pointer);
  }
  for (const state of model.states) {
    if (state.language === "JSONata") checkJsonataState(state, out);
    else out.push(...writtenInJsonata(state, checkJsonPathState));
  }
  return out;
}

/**
 * A JSONPath state with several JSONata fields or expressions was written in JSONata
 * and only lacks its QueryLanguage: one diagnostic saying so, at the first of them,
 * instead of one per field.
 */
function writtenInJsonata(
  state: StateInfo,
  check: (state: StateInfo, out: Diagnostic[]) => void,
): Diagnostic[] {
  const found: Diagnostic[] = [];
  check(state, found);
  if (found.length < 2) return found;
  const fields = found.map((d) => d.path.slice(state.pointer.length + 1).replace(/\//g, "."));
  return [
    diagnostic(
      found[0]!.code,
      `State '${state.name}' is written in JSONata (${listNames(fields)}) but uses JSONPath; add "QueryLanguage": "JSONata" to the state, or to the top level of the definition`,
      found[0]!.path,
    ),
  ];
}

function checkJsonataState(state: StateInfo, out: Diagnostic[]): void {
  const { node, pointer } = state;
  for (const field of Object.keys(node)) {
    const hint =
      state.type === "Map" && field === "Parameters"
        ? "use ItemSelector instead"
        : JSONPATH_ONLY[field];
    if (hint)
      out.push(
        misplaced("JSONPATH_FIELD_IN_JSONATA_STATE", state, field, child(pointer, field), hint),
      );
  }
  for (const [i, catcher] of objectItems(node.Catch)) {
    if ("ResultPath" in catcher) {
      out.push(
        misplaced(
          "JSONPATH_FIELD_IN_JSONATA_STATE",
          state,
          `Catch[${i}].ResultPath`,
          child(pointer, "Catch", i, "ResultPath"),
          "use Output instead",
        ),
      );
    }
  }
  for (const [i, rule] of objectItems(node.Choices)) {
    for (const field of RULE_JSONPATH_FIELDS) {
      if (field in rule) {
        out.push(
          misplaced(
            "JSONPATH_FIELD_IN_JSONATA_STATE",
            state,
            `Choices[${i}].${field}`,
            child(pointer, "Choices", i, field),
            'write the test as "Condition": "{% ... %}" instead',
          ),
        );
      }
    }
  }
  for (const [holder, field, hint] of NESTED_JSONPATH_ONLY) {
    nested(state, holder, field, "JSONPATH_FIELD_IN_JSONATA_STATE", hint, out);
  }
}

function checkJsonPathState(state: StateInfo, out: Diagnostic[]): void {
  const { node, pointer } = state;
  for (const field of Object.keys(node)) {
    const hint = JSONATA_ONLY[field];
    if (hint)
      out.push(
        misplaced("JSONATA_FIELD_IN_JSONPATH_STATE", state, field, child(pointer, field), hint),
      );
  }
  for (const [i, catcher] of objectItems(node.Catch)) {
    if ("Output" in catcher) {
      out.push(
        misplaced(
          "JSONATA_FIELD_IN_JSONPATH_STATE",
          state,
          `Catch[${i}].Output`,
          child(pointer, "Catch", i, "Output"),
          "use ResultPath instead",
        ),
      );
    }
  }
  for (const [i, rule] of objectItems(node.Choices)) {
    for (const field of ["Condition", "Output"]) {
      if (field in rule) {
        const hint =
          field === "Condition"
            ? "compare a Variable with an operator such as StringEquals instead"
            : "use the state's OutputPath instead";
        out.push(
          misplaced(
            "JSONATA_FIELD_IN_JSONPATH_STATE",
            state,
            `Choices[${i}].${field}`,
            child(pointer, "Choices", i, field),
            hint,
          ),
        );
      }
    }
  }
  for (const [holder, field, hint] of NESTED_JSONATA_ONLY) {
    nested(state, holder, field, "JSONATA_FIELD_IN_JSONPATH_STATE", hint, out);
  }
  jsonataTextInPayloads(state, out);
  for (const path of COMPUTED_VALUES) {
    const value = fieldAt(node, path);
    if (typeof value !== "string" || !isJsonataTemplate(value)) continue;
    const field = path.join(".");
    const extra = path[0] === "Timestamp" ? " (String does not match RFC3339 timestamp)" : "";
    out.push(
      diagnostic(
        "JSONATA_IN_JSONPATH_STATE",
        `${field} holds an expression${extra}, but state '${state.name}' uses JSONPath; set "QueryLanguage": "JSONata" to compute it, or use ${path[path.length - 1]}Path`,
        child(pointer, ...path),
      ),
    );
  }
}

/** Payload templates of a JSONPath state: their strings are data, "{% %}" included. */
const JSONPATH_PAYLOADS = ["Parameters", "ResultSelector", "ItemSelector", "Result"] as const;

/**
 * A "{% … %}" string in a JSONPath state's payload template is accepted by AWS and
 * passed on as the literal text: almost surely a state written for JSONata that
 * lacks its QueryLanguage. One warning per state, at the first such string.
 */
function jsonataTextInPayloads(state: StateInfo, out: Diagnostic[]): void {
  const found: string[][] = [];
  const walk = (value: unknown, path: string[]): void => {
    if (typeof value === "string") {
      if (isJsonataTemplate(value)) found.push(path);
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, [...path, String(i)]));
    } else if (isJsonObject(value)) {
      // A '.$' key holds a path or an intrinsic call, checked as such elsewhere.
      for (const [key, item] of Object.entries(value))
        if (!key.endsWith(".$")) walk(item, [...path, key]);
    }
  };
  for (const field of JSONPATH_PAYLOADS) walk(state.node[field], [field]);
  const first = found[0];
  if (!first) return;
  const more = found.length > 1 ? ` (and ${found.length - 1} more)` : "";
  out.push(
    diagnostic(
      "JSONATA_TEXT_IN_JSONPATH_PAYLOAD",
      `${first.join(".")} holds a JSONata expression${more}, but state '${state.name}' uses JSONPath, which passes it on as literal text; add "QueryLanguage": "JSONata" to the state or to the top level to evaluate it`,
      child(state.pointer, ...first),
    ),
  );
}

function nested(
  state: StateInfo,
  path: readonly string[],
  field: string,
  code: "JSONPATH_FIELD_IN_JSONATA_STATE" | "JSONATA_FIELD_IN_JSONPATH_STATE",
  hint: string,
  out: Diagnostic[],
): void {
  const container = fieldAt(state.node, path);
  if (isJsonObject(container) && field in container) {
    out.push(
      misplaced(
        code,
        state,
        [...path, field].join("."),
        child(state.pointer, ...path, field),
        hint,
      ),
    );
  }
}

function misplaced(
  code: "JSONPATH_FIELD_IN_JSONATA_STATE" | "JSONATA_FIELD_IN_JSONPATH_STATE",
  state: StateInfo,
  field: string,
  pointer: string,
  hint: string,
): Diagnostic {
  const [only, uses] =
    code === "JSONPATH_FIELD_IN_JSONATA_STATE" ? ["JSONPath", "JSONata"] : ["JSONata", "JSONPath"];
  return diagnostic(
    code,
    `${field} is a ${only}-only field, but state '${state.name}' uses ${uses}; ${hint}`,
    pointer,
  );
}
