import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { runExecution, type MockResponse } from "../../engine/drivers/memory.js";

/** AWS's States.QueryEvaluationError causes, word for word (see the conformance cases). */
const PREFIX = "An error occurred while executing the state 'S' (entered at the event id #2).";

async function failure(state: object, input: Json = {}, mocks?: MockResponse[]) {
  const definition = {
    QueryLanguage: "JSONata",
    StartAt: "S",
    States: { S: { ...state } },
  } as unknown as StateMachineDefinition;
  const result = await runExecution(definition, {
    input,
    ...(mocks ? { mocks: { S: mocks } } : {}),
  });
  expect(result.status).toBe("FAILED");
  return { error: result.error, cause: result.cause };
}

const pass = (fields: object) => ({ Type: "Pass", ...fields, End: true });
const task = (fields: object) => ({
  Type: "Task",
  Resource: "arn:aws:states:::lambda:invoke",
  ...fields,
  End: true,
});

describe("JSONata error causes", () => {
  it.each<[string, object, string]>([
    [
      "Output",
      pass({ Output: "{% $doesNotExist %}" }),
      "The JSONata expression '$doesNotExist' specified for the field 'Output' returned nothing (undefined).",
    ],
    [
      "a field of Output",
      pass({ Output: { result: "{% $doesNotExist %}" } }),
      "The JSONata expression '$doesNotExist' specified for the field 'Output/result' returned nothing (undefined).",
    ],
    [
      "an item of an array in Output",
      pass({ Output: { list: [1, "{%  $states.input.none  %}"] } }),
      "The JSONata expression '$states.input.none' specified for the field 'Output/list/1' returned nothing (undefined).",
    ],
    [
      "Assign",
      pass({ Assign: { result: "{% $doesNotExist %}" } }),
      "The JSONata expression '$doesNotExist' specified for the field 'Assign/result' returned nothing (undefined).",
    ],
    [
      "Arguments",
      task({ Arguments: "{% $doesNotExist %}" }),
      "The JSONata expression '$doesNotExist' specified for the field 'Arguments' returned nothing (undefined).",
    ],
    [
      "a field of Arguments",
      task({ Arguments: { FunctionName: "{% $doesNotExist %}" } }),
      "The JSONata expression '$doesNotExist' specified for the field 'Arguments/FunctionName' returned nothing (undefined).",
    ],
    [
      "a function that does not exist",
      pass({ Output: { FunctionResult: "{% $randomSeeded($states.input.x) %}" } }),
      "The JSONata expression '$randomSeeded($states.input.x)' specified for the field 'Output/FunctionResult' threw an error during evaluation. T1006: Attempted to invoke a non-function",
    ],
    [
      "$eval, which AWS does not offer",
      pass({ Output: "{% $eval('1') %}" }),
      "The JSONata expression '$eval('1')' specified for the field 'Output' threw an error during evaluation. T1006: Attempted to invoke a non-function",
    ],
    [
      "$error",
      pass({ Output: "{% $error('custom message') %}" }),
      "The JSONata expression '$error('custom message')' specified for the field 'Output' threw an error during evaluation. D3137: custom message",
    ],
    [
      "a type error",
      pass({ Output: "{% 1 + 'a' %}" }),
      "The JSONata expression '1 + 'a'' specified for the field 'Output' threw an error during evaluation. T2002: The right side of the \"+\" operator must evaluate to a number",
    ],
    [
      "a function as the result",
      pass({ Output: "{% function($x){ $x } %}" }),
      "The JSONata expression 'function($x){ $x }' specified for the field 'Output' returned an unsupported result type.",
    ],
    [
      "an invalid $parse",
      pass({ Output: "{% $parse('{') %}" }),
      "The JSONata expression '$parse('{')' specified for the field 'Output' threw an error during evaluation. The argument of $parse is not valid JSON: {",
    ],
    [
      "an unknown $hash algorithm",
      pass({ Output: "{% $hash('a', 'SHA-3') %}" }),
      "The JSONata expression '$hash('a', 'SHA-3')' specified for the field 'Output' threw an error during evaluation. The hash algorithm 'SHA-3' is not supported by $hash; use one of MD5, SHA-1, SHA-256, SHA-384, SHA-512.",
    ],
    [
      "Fail Cause of the wrong type",
      { Type: "Fail", Cause: "{% 42 %}" },
      "The JSONata expression '42' specified for the field 'Cause' returned an unexpected result type. Expected 'string', but was 'number' for value: 42",
    ],
    [
      "a syntax error that the validator would have refused",
      pass({ Output: "{% 1 + %}" }),
      "The JSONata expression '1 +' specified for the field 'Output' threw an error during evaluation. S0207: Unexpected end of expression",
    ],
  ])("%s", async (_name, state, message) => {
    const result = await failure(state, {}, [{ Return: {} }]);
    expect(result).toEqual({ error: "States.QueryEvaluationError", cause: `${PREFIX} ${message}` });
  });

  it.each<[string, Json, string]>([
    ["'string'", null, `Expected 'array', but was 'string' for value: "string"`],
    ["null", null, "Expected 'array', but was 'null' for value: null"],
    ["$states.input.n", { n: 1 }, "Expected 'array', but was 'number' for value: 1"],
    ["$states.input", { a: true }, `Expected 'array', but was 'object' for value: {"a":true}`],
  ])("Map Items %s", async (expression, input, expected) => {
    const map = {
      Type: "Map",
      Items: `{% ${expression} %}`,
      ItemProcessor: { StartAt: "I", States: { I: { Type: "Pass", End: true } } },
      End: true,
    };
    const result = await failure(map, input);
    expect(result.cause).toBe(
      `${PREFIX} The JSONata expression '${expression}' specified for the field 'Items' returned an unexpected result type. ${expected}`,
    );
  });

  it("a Map whose input is not an array", async () => {
    const map = {
      Type: "Map",
      ItemProcessor: { StartAt: "I", States: { I: { Type: "Pass", End: true } } },
      End: true,
    };
    const result = await failure(map, "string" as Json);
    expect(result).toEqual({
      error: "States.QueryEvaluationError",
      cause: `${PREFIX} Map state input must be an array but was: "string"`,
    });
  });

  it("an ItemSelector field", async () => {
    const map = {
      Type: "Map",
      Items: [1],
      ItemSelector: { v: "{% $states.context.Map.Item.Nope %}" },
      ItemProcessor: { StartAt: "I", States: { I: { Type: "Pass", End: true } } },
      End: true,
    };
    const result = await failure(map);
    expect(result.cause).toBe(
      `${PREFIX} The JSONata expression '$states.context.Map.Item.Nope' specified for the field 'ItemSelector/v' returned nothing (undefined).`,
    );
  });

  it("a TimeoutSeconds that is not positive", async () => {
    const result = await failure(task({ TimeoutSeconds: "{% 0 %}" }));
    expect(result.cause).toBe(
      `${PREFIX} The value 0 of the field 'TimeoutSeconds' (from the JSONata expression '0') is out of range: it must be between 1 and 99999999.`,
    );
  });
});
