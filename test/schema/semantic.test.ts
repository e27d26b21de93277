import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../engine/core/json.js";
import {
  validateDefinition,
  type DiagnosticCode,
  type ValidateOptions,
} from "../../schema/index.js";
import { END, LAMBDA, machine } from "./fixtures.js";

/**
 * Each semantic check refuses a bad definition (with its code, at its place) and
 * accepts the mended twin.
 */
interface Row {
  name: string;
  code: DiagnosticCode;
  path?: string;
  bad: JsonObject;
  good: JsonObject;
  options?: ValidateOptions;
}

const pass = (next?: string): JsonObject =>
  next ? { Type: "Pass", Next: next } : { Type: "Pass", End: true };
const task = (extra: JsonObject = {}): JsonObject => ({
  Type: "Task",
  Resource: LAMBDA,
  End: true,
  ...extra,
});
const jsonata = (state: JsonObject): JsonObject =>
  machine({ S: { ...state } }, { QueryLanguage: "JSONata" });
const choice = (rule: JsonObject, extra: JsonObject = {}): JsonObject =>
  machine({
    C: { Type: "Choice", Choices: [{ ...rule, Next: "Y" }], Default: "N", ...extra },
    Y: END,
    N: END,
  });
const map = (label: string, extra: JsonObject = {}): JsonObject => ({
  Type: "Map",
  ItemProcessor: {
    ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
    StartAt: `In ${label}`,
    States: { [`In ${label}`]: pass() },
  },
  Label: label,
  End: true,
  ...extra,
});

const ROWS: Row[] = [
  // --- Transitions and scopes
  {
    name: "StartAt names no state",
    code: "INVALID_START_AT",
    path: "/StartAt",
    bad: { StartAt: "Nope", States: { A: pass() } },
    good: { StartAt: "A", States: { A: pass() } },
  },
  {
    name: "Next names no state",
    code: "MISSING_TRANSITION_TARGET",
    path: "/States/A/Next",
    bad: machine({ A: pass("B") }),
    good: machine({ A: pass("B"), B: pass() }),
  },
  {
    name: "Default names no state",
    code: "MISSING_TRANSITION_TARGET",
    path: "/States/C/Default",
    bad: machine({
      C: {
        Type: "Choice",
        Choices: [{ Variable: "$.x", IsPresent: true, Next: "Y" }],
        Default: "Nowhere",
      },
      Y: END,
    }),
    good: machine({
      C: {
        Type: "Choice",
        Choices: [{ Variable: "$.x", IsPresent: true, Next: "Y" }],
        Default: "Y",
      },
      Y: END,
    }),
  },
  {
    name: "Catch Next names no state",
    code: "MISSING_TRANSITION_TARGET",
    path: "/States/T/Catch/0/Next",
    bad: machine({ T: task({ Catch: [{ ErrorEquals: ["States.ALL"], Next: "Oops" }] }) }),
    good: machine({
      T: task({ Catch: [{ ErrorEquals: ["States.ALL"], Next: "Oops" }] }),
      Oops: { Type: "Fail" },
    }),
  },
  {
    name: "a branch cannot jump to a state of the enclosing scope",
    code: "MISSING_TRANSITION_TARGET",
    path: "/States/P/Branches/0/States/B1/Next",
    bad: machine({
      P: {
        Type: "Parallel",
        Branches: [{ StartAt: "B1", States: { B1: pass("After") } }],
        Next: "After",
      },
      After: pass(),
    }),
    good: machine({
      P: {
        Type: "Parallel",
        Branches: [{ StartAt: "B1", States: { B1: pass("B2"), B2: pass() } }],
        Next: "After",
      },
      After: pass(),
    }),
  },
  {
    name: "neither Next nor End",
    code: "MISSING_NEXT_OR_END",
    path: "/States/A",
    bad: machine({ A: { Type: "Pass" } }),
    good: machine({ A: pass() }),
  },
  {
    name: "both Next and End",
    code: "NEXT_AND_END",
    path: "/States/A/End",
    bad: machine({ A: { Type: "Pass", Next: "B", End: true }, B: pass() }),
    good: machine({ A: pass("B"), B: pass() }),
  },
  {
    name: "unreachable state",
    code: "UNREACHABLE_STATE",
    path: "/States/B",
    bad: machine({ A: pass(), B: pass() }),
    good: machine({ A: pass("B"), B: pass() }),
  },
  {
    name: "no terminal state",
    code: "MISSING_END_STATE",
    path: "/States",
    bad: machine({ A: pass("B"), B: pass("A") }),
    good: machine({ A: pass("B"), B: pass() }),
  },
  {
    name: "state names are unique across scopes",
    code: "DUPLICATE_STATE_NAME",
    bad: machine({
      P: { Type: "Parallel", Branches: [{ StartAt: "P", States: { P: pass() } }], End: true },
    }),
    good: machine({
      P: {
        Type: "Parallel",
        Branches: [{ StartAt: "Inner", States: { Inner: pass() } }],
        End: true,
      },
    }),
  },
  {
    name: "state name over 80 characters",
    code: "INVALID_STATE_NAME",
    bad: machine({ ["x".repeat(81)]: pass() }),
    good: machine({ ["x".repeat(80)]: pass() }),
  },

  // --- Retry and Catch
  {
    name: "States.ALL not alone",
    code: "STATES_ALL_NOT_ALONE",
    path: "/States/T/Retry/0/ErrorEquals",
    bad: machine({ T: task({ Retry: [{ ErrorEquals: ["States.ALL", "Custom"] }] }) }),
    good: machine({ T: task({ Retry: [{ ErrorEquals: ["States.ALL"] }] }) }),
  },
  {
    name: "States.ALL not last",
    code: "STATES_ALL_NOT_LAST",
    path: "/States/T/Catch/0/ErrorEquals",
    bad: machine({
      T: task({
        Catch: [
          { ErrorEquals: ["States.ALL"], Next: "F" },
          { ErrorEquals: ["Custom"], Next: "F" },
        ],
      }),
      F: { Type: "Fail" },
    }),
    good: machine({
      T: task({
        Catch: [
          { ErrorEquals: ["Custom"], Next: "F" },
          { ErrorEquals: ["States.ALL"], Next: "F" },
        ],
      }),
      F: { Type: "Fail" },
    }),
  },

  // --- Query languages
  {
    name: "JSONPath state in a JSONata state machine",
    code: "QUERY_LANGUAGE_DOWNGRADE",
    path: "/States/A/QueryLanguage",
    bad: machine({ A: { ...pass(), QueryLanguage: "JSONPath" } }, { QueryLanguage: "JSONata" }),
    good: machine({ A: pass() }, { QueryLanguage: "JSONata" }),
  },
  {
    name: "Parameters in a JSONata state",
    code: "JSONPATH_FIELD_IN_JSONATA_STATE",
    path: "/States/S/Parameters",
    bad: jsonata({ ...pass(), Parameters: { "a.$": "$.a" } }),
    good: jsonata({ ...pass(), Output: { a: "{% $states.input.a %}" } }),
  },
  {
    name: "Choice Variable in a JSONata state",
    code: "JSONPATH_FIELD_IN_JSONATA_STATE",
    path: "/States/C/Choices/0/Variable",
    bad: machine(
      { C: { Type: "Choice", Choices: [{ Variable: "$.x", IsPresent: true, Next: "Y" }] }, Y: END },
      { QueryLanguage: "JSONata" },
    ),
    good: machine(
      {
        C: {
          Type: "Choice",
          Choices: [{ Condition: "{% $exists($states.input.x) %}", Next: "Y" }],
        },
        Y: END,
      },
      { QueryLanguage: "JSONata" },
    ),
  },
  {
    name: "a state inherits JSONata from its Map",
    code: "JSONPATH_FIELD_IN_JSONATA_STATE",
    path: "/States/M/ItemProcessor/States/In/ResultPath",
    bad: machine({
      M: {
        Type: "Map",
        QueryLanguage: "JSONata",
        ItemProcessor: { StartAt: "In", States: { In: { ...pass(), ResultPath: "$.x" } } },
        End: true,
      },
    }),
    good: machine({
      M: {
        Type: "Map",
        QueryLanguage: "JSONata",
        ItemProcessor: {
          StartAt: "In",
          States: { In: { ...pass(), Output: "{% $states.input %}" } },
        },
        End: true,
      },
    }),
  },
  {
    name: "Arguments in a JSONPath state",
    code: "JSONATA_FIELD_IN_JSONPATH_STATE",
    path: "/States/T/Arguments",
    bad: machine({ T: task({ Arguments: { a: 1 } }) }),
    good: machine({ T: task({ Parameters: { a: 1 } }) }),
  },
  {
    name: "JSONata expression as TimeoutSeconds of a JSONPath state",
    code: "JSONATA_IN_JSONPATH_STATE",
    path: "/States/T/TimeoutSeconds",
    bad: machine({ T: task({ TimeoutSeconds: "{% 5 %}" }) }),
    good: machine({ T: task({ TimeoutSeconds: "{% 5 %}", QueryLanguage: "JSONata" }) }),
  },
  {
    name: "JSONata expression as Timestamp of a JSONPath state",
    code: "JSONATA_IN_JSONPATH_STATE",
    path: "/States/W/Timestamp",
    bad: machine({ W: { Type: "Wait", Timestamp: "{% '2016-03-14T01:59:00Z' %}", End: true } }),
    good: machine({ W: { Type: "Wait", Timestamp: "2016-03-14T01:59:00Z", End: true } }),
  },
  {
    name: "JSONata that does not compile, nested in an array",
    code: "INVALID_JSONATA",
    path: "/States/S/Output/list/1",
    bad: jsonata({ ...pass(), Output: { list: [1, "{% 10 + * 2 %}"] } }),
    good: jsonata({ ...pass(), Output: { list: [1, "{% 10 + 2 %}"] } }),
  },
  {
    name: "JSONata with one delimiter",
    code: "INVALID_JSONATA",
    path: "/States/S/Assign/x",
    bad: jsonata({ ...pass(), Assign: { x: "{% $states.input %" } }),
    good: jsonata({ ...pass(), Assign: { x: "{% $states.input %}" } }),
  },
  {
    name: "JSONata Choice rule without Condition",
    code: "INVALID_CHOICE_RULE",
    path: "/States/C/Choices/0",
    bad: machine(
      { C: { Type: "Choice", Choices: [{ Next: "Y" }] }, Y: END },
      { QueryLanguage: "JSONata" },
    ),
    good: machine(
      { C: { Type: "Choice", Choices: [{ Condition: "{% true %}", Next: "Y" }] }, Y: END },
      { QueryLanguage: "JSONata" },
    ),
  },

  // --- Paths, payloads and intrinsic functions
  {
    name: "InputPath does not parse",
    code: "INVALID_JSONPATH",
    path: "/States/A/InputPath",
    bad: machine({ A: { ...pass(), InputPath: "bug$.a" } }),
    good: machine({ A: { ...pass(), InputPath: "$.a" } }),
  },
  {
    name: "ResultPath with a wildcard",
    code: "INVALID_REFERENCE_PATH",
    path: "/States/A/ResultPath",
    bad: machine({ A: { ...pass(), ResultPath: "$.a[*]" } }),
    good: machine({ A: { ...pass(), ResultPath: "$.a[0]" } }),
  },
  {
    name: "ResultPath into a variable",
    code: "INVALID_REFERENCE_PATH",
    path: "/States/A/ResultPath",
    bad: machine({ A: { ...pass(), ResultPath: "$foo" } }),
    good: machine({ A: { ...pass(), ResultPath: "$.foo" } }),
  },
  {
    name: "ResultPath with a filter",
    code: "INVALID_REFERENCE_PATH",
    bad: machine({ A: { ...pass(), ResultPath: "$.a[?(@.b == 1)]" } }),
    good: machine({ A: { ...pass(), ResultPath: "$.a" } }),
  },
  {
    name: "SecondsPath with recursive descent",
    code: "INVALID_REFERENCE_PATH",
    bad: machine({ W: { Type: "Wait", SecondsPath: "$..s", End: true } }),
    good: machine({ W: { Type: "Wait", SecondsPath: "$.s", End: true } }),
  },
  {
    name: "Choice Variable is an intrinsic call",
    code: "INVALID_REFERENCE_PATH",
    bad: choice({ Variable: "States.ArrayLength($.a)", NumericEquals: 1 }),
    good: choice({ Variable: "$.a[0]", NumericEquals: 1 }),
  },
  {
    name: "'.$' key holding a literal",
    code: "INVALID_PATH_FIELD",
    path: "/States/A/Parameters/x.$",
    bad: machine({ A: { ...pass(), Parameters: { "x.$": "hello" } } }),
    good: machine({ A: { ...pass(), Parameters: { "x.$": "$.hello" } } }),
  },
  {
    name: "'.$' key holding a number",
    code: "INVALID_PATH_FIELD",
    bad: machine({ A: { ...pass(), Parameters: { deep: [{ "x.$": 5 }] } } }),
    good: machine({ A: { ...pass(), Parameters: { deep: [{ x: 5 }] } } }),
  },
  {
    name: "unknown intrinsic function",
    code: "INVALID_INTRINSIC_FUNCTION",
    bad: machine({ A: { ...pass(), Parameters: { "x.$": "States.Nope($.a)" } } }),
    good: machine({ A: { ...pass(), Parameters: { "x.$": "States.JsonToString($.a)" } } }),
  },
  {
    name: "intrinsic with the wrong arity",
    code: "INVALID_INTRINSIC_FUNCTION",
    bad: machine({ A: { ...pass(), Parameters: { "x.$": "States.UUID(1)" } } }),
    good: machine({ A: { ...pass(), Parameters: { "x.$": "States.UUID()" } } }),
  },
  {
    name: "intrinsic with an illegal escape",
    code: "INVALID_INTRINSIC_FUNCTION",
    bad: machine({
      A: { ...pass(), Parameters: { "x.$": "States.Format('say \\\"hi\\\" {}', $.name)" } },
    }),
    good: machine({
      A: { ...pass(), Parameters: { "x.$": "States.Format('it\\'s {}', $.name)" } },
    }),
  },
  {
    name: "ErrorPath neither path nor call",
    code: "INVALID_INTRINSIC_FUNCTION",
    bad: machine({ F: { Type: "Fail", ErrorPath: "States.Format(" } }),
    good: machine({ F: { Type: "Fail", ErrorPath: "States.Format('E{}', $.code)" } }),
  },
  {
    name: "both x and x.$",
    code: "DUPLICATE_PAYLOAD_FIELD",
    bad: machine({ A: { ...pass(), Parameters: { a: 1, "a.$": "$.a" } } }),
    good: machine({ A: { ...pass(), Parameters: { "a.$": "$.a" } } }),
  },

  // --- Choice rules
  {
    name: "rule with two operators",
    code: "INVALID_CHOICE_RULE",
    bad: choice({ Variable: "$.x", NumericEquals: 1, NumericLessThan: 3 }),
    good: choice({ Variable: "$.x", NumericEquals: 1 }),
  },
  {
    name: "rule without Variable",
    code: "INVALID_CHOICE_RULE",
    bad: choice({ StringEquals: "a" }),
    good: choice({ Variable: "$.s", StringEquals: "a" }),
  },
  {
    name: "rule without an operator",
    code: "INVALID_CHOICE_RULE",
    bad: choice({ Variable: "$.s" }),
    good: choice({ Variable: "$.s", IsString: true }),
  },
  {
    name: "And with a Variable",
    code: "INVALID_CHOICE_RULE",
    bad: choice({ Variable: "$.s", And: [{ Variable: "$.a", IsNull: false }] }),
    good: choice({ And: [{ Variable: "$.a", IsNull: false }] }),
  },
  {
    name: "Timestamp operand is not RFC 3339",
    code: "INVALID_TIMESTAMP",
    bad: choice({ Variable: "$.t", TimestampEquals: "2016-12-05 21:29:29Z" }),
    good: choice({ Variable: "$.t", TimestampEquals: "2016-12-05T21:29:29Z" }),
  },

  // --- Task, Wait and Map
  {
    name: "heartbeat not below timeout",
    code: "HEARTBEAT_NOT_BELOW_TIMEOUT",
    bad: machine({ T: task({ TimeoutSeconds: 10, HeartbeatSeconds: 10 }) }),
    good: machine({ T: task({ TimeoutSeconds: 10, HeartbeatSeconds: 5 }) }),
  },
  {
    name: "Resource is not a URI",
    code: "INVALID_RESOURCE",
    bad: machine({ T: task({ Resource: "my function" }) }),
    good: machine({ T: task({ Resource: "arn:aws:lambda:us-east-1:1:function:f" }) }),
  },
  {
    name: "unknown action of an optimized integration",
    code: "INVALID_RESOURCE",
    bad: machine({ T: task({ Resource: "arn:aws:states:::dynamodb:query" }) }),
    good: machine({ T: task({ Resource: "arn:aws:states:::aws-sdk:dynamodb:query" }) }),
  },
  {
    name: "callback pattern in an Express state machine",
    code: "UNSUPPORTED_IN_EXPRESS",
    options: { type: "EXPRESS" },
    bad: machine({ T: task({ Resource: "arn:aws:states:::sqs:sendMessage.waitForTaskToken" }) }),
    good: machine({ T: task({ Resource: "arn:aws:states:::sqs:sendMessage" }) }),
  },
  {
    name: "Map label with a space",
    code: "INVALID_LABEL_NAME",
    bad: machine({ M: map("my label") }),
    good: machine({ M: map("my_label") }),
  },
  {
    name: "Map label over 40 characters",
    code: "INVALID_LABEL_NAME",
    bad: machine({ M: map("l".repeat(41)) }),
    good: machine({ M: map("l".repeat(40)) }),
  },
  {
    name: "Map labels repeat",
    code: "DUPLICATE_LABEL_NAME",
    bad: machine({ M1: map("same", { End: undefined as never, Next: "M2" }), M2: map("same") }),
    good: machine({ M1: map("one", { End: undefined as never, Next: "M2" }), M2: map("two") }),
  },

  // --- Shape
  {
    name: "unknown field",
    code: "SCHEMA_VALIDATION_FAILED",
    path: "/States/A/bugInputPath",
    bad: machine({ A: { ...pass(), bugInputPath: "$.a" } }),
    good: machine({ A: { ...pass(), InputPath: "$.a" } }),
  },
  {
    name: "missing Resource",
    code: "SCHEMA_VALIDATION_FAILED",
    path: "/States/T",
    bad: machine({ T: { Type: "Task", End: true } }),
    good: machine({ T: task() }),
  },
  {
    name: "empty Credentials",
    code: "SCHEMA_VALIDATION_FAILED",
    path: "/States/T/Credentials",
    bad: machine({ T: task({ Credentials: {} }) }),
    good: machine({ T: task({ Credentials: { RoleArn: "arn:aws:iam::1:role/r" } }) }),
  },
  {
    name: "Wait with two durations",
    code: "SCHEMA_VALIDATION_FAILED",
    path: "/States/W",
    bad: machine({ W: { Type: "Wait", Seconds: 1, SecondsPath: "$.s", End: true } }),
    good: machine({ W: { Type: "Wait", Seconds: 1, End: true } }),
  },
  {
    name: "Timeout and TimeoutPath",
    code: "MUTUALLY_EXCLUSIVE_FIELDS",
    path: "/States/T/TimeoutSecondsPath",
    bad: machine({ T: task({ TimeoutSeconds: 5, TimeoutSecondsPath: "$.t" }) }),
    good: machine({ T: task({ TimeoutSecondsPath: "$.t" }) }),
  },
  {
    name: "Items and ItemsPath",
    code: "MUTUALLY_EXCLUSIVE_FIELDS",
    bad: machine({ M: { ...map("L"), ItemsPath: "$.a", Items: [1] } }),
    good: machine({ M: { ...map("L"), ItemsPath: "$.a" } }),
  },
  {
    name: "tolerated percentage over 100",
    code: "SCHEMA_VALIDATION_FAILED",
    bad: machine({ M: { ...map("L"), ToleratedFailurePercentage: 105 } }),
    good: machine({ M: { ...map("L"), ToleratedFailurePercentage: 100 } }),
  },
];

function clean(definition: JsonObject): JsonObject {
  // Rows build some states by spreading and overriding End with undefined.
  return JSON.parse(JSON.stringify(definition)) as JsonObject;
}

describe("semantic checks refuse the bad definition and accept its mended twin", () => {
  it.each(ROWS)("$code: $name", ({ code, path, bad, good, options }) => {
    const refused = validateDefinition(clean(bad), options);
    expect(refused.valid).toBe(false);
    const hit = refused.diagnostics.find((d) => d.code === code);
    expect(hit, JSON.stringify(refused.diagnostics, null, 2)).toBeDefined();
    if (path !== undefined) expect(hit!.path).toBe(path);
    expect(hit!.message.length).toBeGreaterThan(10);

    const accepted = validateDefinition(clean(good), options);
    expect(accepted.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(accepted.valid).toBe(true);
    expect(accepted.definition).toBeDefined();
  });
});

describe("warnings leave a definition valid", () => {
  it("UNKNOWN_STATES_ERROR: AWS accepts a States. name that is not predefined", () => {
    const result = validateDefinition(
      machine({
        T: task({
          Retry: [{ ErrorEquals: ["States.TimeOut"] }],
          Catch: [{ ErrorEquals: ["States.QuorumMet"], Next: "E" }],
        }),
        E: END,
      }),
    );
    expect(result.valid).toBe(true);
    expect(result.diagnostics).toMatchObject([
      {
        code: "UNKNOWN_STATES_ERROR",
        severity: "warning",
        path: "/States/T/Retry/0/ErrorEquals/0",
        message: expect.stringContaining("did you mean 'States.Timeout'?"),
      },
      {
        code: "UNKNOWN_STATES_ERROR",
        severity: "warning",
        path: "/States/T/Catch/0/ErrorEquals/0",
      },
    ]);
  });

  it("NO_PATH_TO_END: a loop that never reaches a terminal state", () => {
    const result = validateDefinition(
      machine({ A: pass("B"), B: pass("A"), C: pass() }, { StartAt: "A" }),
    );
    // C is the terminal state but nothing reaches it: unreachable is an error.
    expect(result.diagnostics.map((d) => d.code)).toContain("NO_PATH_TO_END");
  });

  it("NO_DOLLAR: a literal that looks like a path", () => {
    const result = validateDefinition(machine({ A: { ...pass(), Parameters: { x: "$.input" } } }));
    expect(result.valid).toBe(true);
    expect(result.diagnostics).toMatchObject([
      { code: "NO_DOLLAR", severity: "warning", path: "/States/A/Parameters/x" },
    ]);
  });

  it("JSONATA_TEXT_IN_JSONPATH_PAYLOAD: a {% %} string a JSONPath state passes on as text", () => {
    const result = validateDefinition(
      machine({
        T: task({
          Parameters: { order: { id: "{% $states.input.id %}", "n.$": "$.n" }, all: ["{% 1 %}"] },
        }),
      }),
    );
    expect(result.valid).toBe(true);
    expect(result.diagnostics).toMatchObject([
      {
        code: "JSONATA_TEXT_IN_JSONPATH_PAYLOAD",
        severity: "warning",
        path: "/States/T/Parameters/order/id",
        message: expect.stringContaining(
          "Parameters.order.id holds a JSONata expression (and 1 more), but state 'T' uses JSONPath",
        ),
      },
    ]);
    const pass = validateDefinition(
      machine({ S: { Type: "Pass", Result: ["{% 2 %}"], End: true } }),
    );
    expect(pass.diagnostics).toMatchObject([{ path: "/States/S/Result/0" }]);
    // Evaluated where the state is JSONata; text that merely mentions {% is fine.
    const fine = [
      jsonata({ Type: "Pass", Output: { id: "{% $states.input.id %}" }, End: true }),
      machine({ S: { Type: "Pass", Result: { note: "use {% … %} in JSONata" }, End: true } }),
    ];
    for (const definition of fine) expect(validateDefinition(definition).diagnostics).toEqual([]);
  });

  it("PASS_RESULT_IS_STATIC: a '.$' key in a Pass Result", () => {
    const result = validateDefinition(machine({ A: { ...pass(), Result: { "x.$": "$.a" } } }));
    expect(result.valid).toBe(true);
    expect(result.diagnostics[0]).toMatchObject({
      code: "PASS_RESULT_IS_STATIC",
      severity: "warning",
    });
  });

  it("NO_PATH: a Fail Error that looks like a path", () => {
    const result = validateDefinition(machine({ F: { Type: "Fail", Error: "$.error" } }));
    expect(result.valid).toBe(true);
    expect(result.diagnostics[0]).toMatchObject({
      code: "NO_PATH",
      severity: "warning",
      path: "/States/F/Error",
    });
  });
});

describe("messages say what would be right", () => {
  it("lists the states of the scope for a bad Next", () => {
    const [d] = validateDefinition(
      machine({ A: pass("Nope"), B: pass() }, { StartAt: "A" }),
    ).diagnostics.filter((x) => x.code === "MISSING_TRANSITION_TARGET");
    expect(d?.message).toBe("Next 'Nope' names no state at the top level; states here: A, B");
  });

  it("suggests the closest field name", () => {
    const { diagnostics } = validateDefinition(
      machine({ T: task({ Retry: [{ ErrorEquals: ["X"], IntervalSecond: 1 }] }) }),
    );
    expect(diagnostics[0]?.message).toContain("did you mean 'IntervalSeconds'?");
  });
});
