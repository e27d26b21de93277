import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../engine/core/json.js";
import { validateDefinition } from "../../schema/index.js";
import { END, LAMBDA, machine } from "./fixtures.js";

/**
 * Known slips give ONE diagnostic naming the real mistake, not a cascade about its
 * consequences; and the twin without the slip is valid.
 */
const only = (definition: JsonObject) => {
  const result = validateDefinition(definition);
  expect(result.valid).toBe(false);
  expect(result.diagnostics, JSON.stringify(result.diagnostics, null, 2)).toHaveLength(1);
  return result.diagnostics[0]!;
};

describe("one diagnostic per slip", () => {
  it('"QueryLanguage": "JSONata" inside States', () => {
    const d = only({
      StartAt: "A",
      States: { QueryLanguage: "JSONata", A: { Type: "Pass", Output: "{% 1 %}", End: true } },
    });
    expect(d).toMatchObject({
      code: "MISPLACED_FIELD",
      path: "/States/QueryLanguage",
      message: expect.stringContaining("QueryLanguage belongs at the top level of the definition"),
    });
    expect(
      validateDefinition({
        QueryLanguage: "JSONata",
        StartAt: "A",
        States: { A: { Type: "Pass", Output: "{% 1 %}", End: true } },
      }).valid,
    ).toBe(true);
  });

  it("a Comment inside a branch's States", () => {
    const d = only(
      machine({
        P: {
          Type: "Parallel",
          Branches: [{ StartAt: "B", States: { Comment: "the branch", B: END } }],
          End: true,
        },
      }),
    );
    expect(d).toMatchObject({
      code: "MISPLACED_FIELD",
      path: "/States/P/Branches/0/States/Comment",
    });
  });

  it("Next on a terminal state", () => {
    const d = only(machine({ A: { Type: "Succeed", Next: "B" }, B: END }));
    expect(d).toMatchObject({
      path: "/States/A/Next",
      message: expect.stringContaining("terminal"),
    });
  });

  it('"End": "true" as a string', () => {
    const d = only(machine({ A: { Type: "Pass", End: "true" } }));
    expect(d).toMatchObject({
      code: "SCHEMA_VALIDATION_FAILED",
      path: "/States/A/End",
      message:
        'End must be the boolean true, not the string "true"; write "End": true without quotes',
    });
  });

  it("JSONata fields in a JSONPath state: the missing QueryLanguage", () => {
    const d = only(
      machine({
        T: {
          Type: "Task",
          Resource: LAMBDA,
          Arguments: { x: "{% $states.input.a %}" },
          Output: "{% $states.result %}",
          End: true,
        },
      }),
    );
    expect(d).toMatchObject({
      code: "JSONATA_FIELD_IN_JSONPATH_STATE",
      path: "/States/T/Arguments",
      message: expect.stringContaining('add "QueryLanguage": "JSONata"'),
    });
  });

  it("a path value under a key without '.$': a hint, the definition stays valid", () => {
    const result = validateDefinition(
      machine({ A: { Type: "Pass", Parameters: { x: "$.y" }, InputPath: "$.in", End: true } }),
    );
    expect(result.valid).toBe(true);
    expect(result.diagnostics).toMatchObject([
      {
        code: "NO_DOLLAR",
        path: "/States/A/Parameters/x",
        message: expect.stringContaining("'x.$'"),
      },
    ]);
  });

  it("a Next differing only in letter case from a state name", () => {
    const d = only(machine({ A: { Type: "Pass", Next: "process order" }, "Process Order": END }));
    expect(d).toMatchObject({
      code: "MISSING_TRANSITION_TARGET",
      path: "/States/A/Next",
      message: expect.stringContaining("did you mean 'Process Order'?"),
    });
  });

  it("a StartAt and a Catch Next differing only in case", () => {
    const result = validateDefinition({
      StartAt: "work",
      States: {
        Work: {
          Type: "Task",
          Resource: LAMBDA,
          Catch: [{ ErrorEquals: ["States.ALL"], Next: "oops" }],
          End: true,
        },
        Oops: { Type: "Fail" },
      },
    });
    expect(result.diagnostics.map((d) => [d.code, d.path])).toEqual([
      ["INVALID_START_AT", "/StartAt"],
      ["MISSING_TRANSITION_TARGET", "/States/Work/Catch/0/Next"],
    ]);
  });

  it("does not guess when two states match ignoring case", () => {
    const result = validateDefinition(
      machine({ A: { Type: "Pass", Next: "ab" }, AB: END, Ab: END }),
    );
    expect(
      result.diagnostics.find((d) => d.code === "MISSING_TRANSITION_TARGET")?.message,
    ).not.toContain("did you mean");
  });
});
