import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { JsonObject } from "../../engine/core/json.js";
import { readPath, writeReferencePath, type PathScope } from "../../engine/jsonpath/index.js";
import { validateDefinition } from "../../schema/index.js";
import { execute } from "./helpers.js";

/**
 * Quotes inside bracket-notation names (issue #36).
 *
 * AWS Developer Guide, "Using JSONPath paths"
 * (https://docs.aws.amazon.com/step-functions/latest/dg/amazon-states-language-paths.html):
 * "Step Functions paths use JsonPath syntax" (Jayway JsonPath), where a property
 * name with special characters is written in bracket notation, `$['my key']`, in
 * single or double quotes, and a backslash escapes the next character: `\'` and
 * `\"` are a quote inside the name, `\\` a backslash. A quote of the other kind
 * needs no escape: `$["it's"]`, `$['say "hi"']`. (Jayway's answer for
 * `$[':@."$,*\'\\']` is the key `:@."$,*'\`: cburgmer's json-path-comparison,
 * "Bracket notation with quoted special characters combined".)
 */
const input: JsonObject = {
  'Test"Name': "double",
  "it's": "single",
  ":@.\"$,*'\\": 42,
  "a]b": "bracket",
};
const scope: PathScope = { input, context: {}, variables: {} };

describe("bracket names with quotes: the JSONPath reader", () => {
  it.each([
    [`$['Test\\"Name']`, "double"],
    [`$["Test\\"Name"]`, "double"],
    [`$['Test"Name']`, "double"],
    [`$["it's"]`, "single"],
    [`$['it\\'s']`, "single"],
    [`$[':@."$,*\\'\\\\']`, 42],
    [`$['a]b']`, "bracket"],
  ])("%s", (path, value) => {
    expect(readPath(path, scope)).toEqual({ found: true, value });
  });

  it("ResultPath writes under an escaped name", () => {
    expect(writeReferencePath({}, `$['it\\'s']`, 1)).toEqual({ "it's": 1 });
    expect(writeReferencePath({}, `$["Test\\"Name"]`, 2)).toEqual({ 'Test"Name': 2 });
  });
});

describe("bracket names with quotes: a definition that uses them", () => {
  // As the definition's JSON text spells them: "$['Test\"Name']" is $['Test"Name']
  // with the JSON escape, "$['Test\\\"Name']" is $['Test\"Name'] with Jayway's.
  const definition = {
    StartAt: "P",
    States: {
      P: {
        Type: "Pass",
        InputPath: "$['order \\'A\\'']",
        Parameters: {
          "double.$": "$['Test\\\"Name']",
          "single.$": '$["it\'s"]',
          "formatted.$": "States.Format('{} and {}', $['Test\\\"Name'], $['it\\'s'])",
        },
        ResultPath: "$['it\\'s result']",
        Next: "C",
      },
      C: {
        Type: "Choice",
        Choices: [
          {
            Variable: "$['it\\'s result'].double",
            StringEquals: "D",
            Next: "Yes",
          },
          { Variable: '$["Test\\"Name"]', IsPresent: true, Next: "No" },
        ],
        Default: "No",
      },
      Yes: { Type: "Pass", OutputPath: "$['it\\'s result']", End: true },
      No: { Type: "Fail", Error: "Wrong" },
    },
  };

  it("the validator accepts it (also inside an intrinsic function's path argument)", () => {
    const result = validateDefinition(definition);
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("the validator still refuses an unknown escape in a string literal", () => {
    const bad = {
      StartAt: "P",
      States: {
        P: {
          Type: "Pass",
          Parameters: { "f.$": "States.Format('a\\\"b {}', $['it\\'s'])" },
          End: true,
        },
      },
    };
    const result = validateDefinition(bad);
    expect(result.diagnostics.map((d) => d.code)).toContain("INVALID_INTRINSIC_FUNCTION");
  });

  it("runs: InputPath, Parameters paths, an intrinsic's path, ResultPath and Choice Variable", async () => {
    const r = await execute(definition as unknown as StateMachineDefinition, {
      input: { "order 'A'": { 'Test"Name': "D", "it's": "S" } },
    });
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual({ double: "D", single: "S", formatted: "D and S" });
  });
});
