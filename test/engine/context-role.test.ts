import { describe, expect, it } from "vitest";
import { details, execute } from "./helpers.js";

/**
 * `$$.Execution.RoleArn` (issue #36). AWS Developer Guide, "Accessing execution data
 * from the Context object in Step Functions"
 * (https://docs.aws.amazon.com/step-functions/latest/dg/input-output-contextobject.html):
 * the context object's `Execution` holds `"RoleArn": "String"`, in a running
 * execution the state machine's role ("arn:aws:iam::123456789012:role..."): the
 * role the execution started with, the one ExecutionStarted records as `roleArn`.
 */
const ROLE = "arn:aws:iam::123456789012:role/service-role/StepFunctions-orders";

describe("$$.Execution.RoleArn", () => {
  it("is the execution's role, in the top level and inside Map and Parallel", async () => {
    const r = await execute(
      {
        StartAt: "P",
        States: {
          P: {
            Type: "Parallel",
            Branches: [
              {
                StartAt: "M",
                States: {
                  M: {
                    Type: "Map",
                    ItemSelector: { "role.$": "$$.Execution.RoleArn" },
                    ItemProcessor: {
                      StartAt: "I",
                      States: {
                        I: {
                          Type: "Pass",
                          Parameters: { "outer.$": "$.role", "inner.$": "$$.Execution.RoleArn" },
                          End: true,
                        },
                      },
                    },
                    End: true,
                  },
                },
              },
            ],
            ResultSelector: { "top.$": "$$.Execution.RoleArn", "branch.$": "$[0]" },
            End: true,
          },
        },
      },
      { input: [1], roleArn: ROLE },
    );
    expect(r.output).toEqual({ top: ROLE, branch: [{ outer: ROLE, inner: ROLE }] });
    expect(details(r.history[0]!).roleArn).toBe(ROLE);
  });

  it("JSONata reads it as $states.context.Execution.RoleArn", async () => {
    const r = await execute(
      {
        QueryLanguage: "JSONata",
        StartAt: "P",
        States: {
          P: { Type: "Pass", Output: "{% $states.context.Execution.RoleArn %}", End: true },
        },
      },
      { roleArn: ROLE },
    );
    expect(r.output).toBe(ROLE);
  });

  it("without a role given, it is the role ExecutionStarted records", async () => {
    const r = await execute({
      StartAt: "P",
      States: { P: { Type: "Pass", Parameters: { "role.$": "$$.Execution.RoleArn" }, End: true } },
    });
    expect(r.output).toEqual({ role: details(r.history[0]!).roleArn });
  });
});
