import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { JsonObject } from "../../engine/core/json.js";
import { runExecution } from "../../engine/drivers/memory.js";
import { validateDefinition } from "../../schema/index.js";

/**
 * `Parameters` given as a JSON array (issue #36). AWS accepts it when a state machine
 * is created and runs it: each object in the array is a payload template whose ".$"
 * keys are evaluated ("Passing parameters to a service API in Step Functions",
 * https://docs.aws.amazon.com/step-functions/latest/dg/connect-parameters.html:
 * "To specify that a parameter use a path, end the parameter name with .$"), other
 * values are passed as they are. Deployed definitions (a serverless pattern) use it.
 */
const ARRAY = [{ "id.$": "$.id", kind: "first" }, "literal", 3, [{ "name.$": "$$.State.Name" }]];

function machine(state: JsonObject): StateMachineDefinition & JsonObject {
  const definition = { StartAt: "S", States: { S: { ...state, End: true } } };
  return definition as unknown as StateMachineDefinition & JsonObject;
}

describe("Parameters as a JSON array", () => {
  it.each([
    ["Pass", { Type: "Pass", Parameters: ARRAY }],
    [
      "Task",
      {
        Type: "Task",
        Resource: "arn:aws:lambda:us-east-1:123456789012:function:f",
        Parameters: ARRAY,
      },
    ],
    [
      "Parallel",
      {
        Type: "Parallel",
        Parameters: ARRAY,
        Branches: [{ StartAt: "B", States: { B: { Type: "Pass", End: true } } }],
      },
    ],
    [
      "Map",
      {
        Type: "Map",
        Parameters: [{ "item.$": "$$.Map.Item.Value" }],
        ItemProcessor: { StartAt: "I", States: { I: { Type: "Pass", End: true } } },
      },
    ],
  ])("the validator accepts it on a %s state", (_type, state) => {
    const result = validateDefinition(machine(state as JsonObject));
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("the validator still checks the paths inside the array's objects", () => {
    const result = validateDefinition(
      machine({ Type: "Pass", Parameters: [{ "bad.$": "not a path" }] }),
    );
    expect(result.valid).toBe(false);
    expect(result.diagnostics.map((d) => d.path)).toContain("/States/S/Parameters/0/bad.$");
  });

  it("refuses Parameters that are neither an object nor an array", () => {
    const result = validateDefinition(machine({ Type: "Pass", Parameters: "x" }));
    expect(result.valid).toBe(false);
    expect(result.diagnostics[0]!.path).toBe("/States/S/Parameters");
  });

  it("a Pass state's output is the array with its .$ keys resolved", async () => {
    const r = await runExecution(machine({ Type: "Pass", Parameters: ARRAY }), {
      input: { id: 7 },
    });
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual([{ id: 7, kind: "first" }, "literal", 3, [{ name: "S" }]]);
  });

  it("a Task receives the array as its input", async () => {
    const seen: unknown[] = [];
    const r = await runExecution(
      machine({ Type: "Task", Resource: "echo", Parameters: [{ "id.$": "$.id" }, "x"] }),
      {
        input: { id: 1 },
        tasks: {
          echo: (input) => {
            seen.push(input);
            return input;
          },
        },
      },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(seen).toEqual([[{ id: 1 }, "x"]]);
  });
});
