import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../engine/core/json.js";
import { CODES, validateDefinition } from "../../schema/index.js";
import { LAMBDA } from "./fixtures.js";

/** Every state type and field, in both query languages, validates. */
const JSONPATH: JsonObject = {
  Comment: "every JSONPath field",
  Version: "1.0",
  TimeoutSeconds: 3600,
  StartAt: "Pass",
  States: {
    Pass: {
      Type: "Pass",
      Comment: "pass",
      InputPath: "$.in",
      Parameters: {
        "id.$": "States.UUID()",
        "ctx.$": "$$.Execution.Id",
        "v.$": "$var.field",
        fixed: [1, { a: null }],
      },
      Result: { static: true },
      ResultPath: "$.out",
      OutputPath: "$",
      Assign: { var: 1, "copy.$": "$.out" },
      Next: "Task",
    },
    Task: {
      Type: "Task",
      Resource: "arn:aws:states:::lambda:invoke",
      Parameters: { FunctionName: LAMBDA, "Payload.$": "$" },
      ResultSelector: { "body.$": "$.Payload" },
      ResultPath: "$.result",
      TimeoutSecondsPath: "$.timeout",
      HeartbeatSecondsPath: "$.heartbeat",
      Credentials: { "RoleArn.$": "$.role" },
      Retry: [
        {
          ErrorEquals: ["States.Timeout"],
          IntervalSeconds: 1,
          MaxAttempts: 2,
          BackoffRate: 1.5,
          MaxDelaySeconds: 10,
          JitterStrategy: "FULL",
          Comment: "r",
        },
        { ErrorEquals: ["States.ALL"] },
      ],
      Catch: [
        {
          ErrorEquals: ["States.ALL"],
          ResultPath: "$.error",
          Assign: { "failed.$": "$.error" },
          Next: "Fail",
          Comment: "c",
        },
      ],
      Next: "Choice",
    },
    Choice: {
      Type: "Choice",
      InputPath: "$",
      OutputPath: "$",
      Choices: [
        { Variable: "$.s", StringEquals: "a", Next: "Wait", Assign: { chose: "a" } },
        { Variable: "$.s", StringEqualsPath: "$.t", Next: "Wait" },
        { Variable: "$.s", StringMatches: "log-*.txt", Next: "Wait" },
        { Variable: "$.n", NumericGreaterThanEquals: 1.5, Next: "Wait" },
        { Variable: "$.n", NumericLessThanPath: "$$.Map.Item.Index", Next: "Wait" },
        { Variable: "$.b", BooleanEquals: true, Next: "Wait" },
        { Variable: "$.ts", TimestampLessThan: "2024-01-01T00:00:00.5+01:00", Next: "Wait" },
        { Variable: "$var", IsPresent: true, Next: "Wait" },
        {
          And: [
            { Variable: "$.a", IsNumeric: true },
            {
              Or: [
                { Variable: "$.b", IsNull: false },
                { Not: { Variable: "$.c", IsTimestamp: true } },
              ],
            },
          ],
          Next: "Parallel",
        },
      ],
      Default: "Parallel",
      Assign: { chosen: true },
    },
    Wait: { Type: "Wait", SecondsPath: "$.seconds", Next: "Wait2" },
    Wait2: { Type: "Wait", Timestamp: "2016-03-14T01:59:00Z", Next: "Wait3" },
    Wait3: { Type: "Wait", TimestampPath: "$.when", Next: "Parallel" },
    Parallel: {
      Type: "Parallel",
      Branches: [
        { StartAt: "B1", States: { B1: { Type: "Pass", End: true } } },
        { Comment: "second", StartAt: "B2", States: { B2: { Type: "Succeed" } } },
      ],
      Parameters: { "input.$": "$" },
      ResultSelector: { "first.$": "$[0]" },
      ResultPath: "$.branches",
      Retry: [{ ErrorEquals: ["States.BranchFailed"] }],
      Catch: [{ ErrorEquals: ["States.ALL"], Next: "Fail" }],
      Next: "Map",
    },
    Map: {
      Type: "Map",
      ItemsPath: "$.items",
      ItemSelector: { "value.$": "$$.Map.Item.Value" },
      MaxConcurrencyPath: "$.concurrency",
      ItemProcessor: {
        ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
        StartAt: "Item",
        States: { Item: { Type: "Task", Resource: LAMBDA, End: true } },
      },
      ItemReader: {
        Resource: "arn:aws:states:::s3:getObject",
        ReaderConfig: { InputType: "CSV", CSVHeaderLocation: "FIRST_ROW", MaxItemsPath: "$.max" },
        Parameters: { Bucket: "b", "Key.$": "$.key" },
      },
      ItemBatcher: {
        MaxItemsPerBatchPath: "$.batch",
        MaxInputBytesPerBatch: 1024,
        BatchInput: { "run.$": "$$.Execution.Name" },
      },
      ResultWriter: {
        Resource: "arn:aws:states:::s3:putObject",
        Parameters: { Bucket: "out", Prefix: "p" },
      },
      ToleratedFailurePercentagePath: "$.pct",
      ToleratedFailureCountPath: "$.count",
      Label: "Items",
      ResultSelector: { "all.$": "$" },
      ResultPath: "$.mapped",
      Next: "Legacy",
    },
    Legacy: {
      Type: "Map",
      ItemsPath: "$.items",
      Parameters: { "item.$": "$$.Map.Item.Value" },
      MaxConcurrency: 0,
      Iterator: { StartAt: "L", States: { L: { Type: "Pass", End: true } } },
      ToleratedFailurePercentage: 5.5,
      ToleratedFailureCount: 3,
      Next: "Done",
    },
    Done: { Type: "Succeed", InputPath: "$", OutputPath: "$.result" },
    Fail: {
      Type: "Fail",
      ErrorPath: "$.error.Error",
      CausePath: "States.Format('failed: {}', $.error.Cause)",
    },
  },
};

const JSONATA: JsonObject = {
  QueryLanguage: "JSONata",
  StartAt: "Pass",
  States: {
    Pass: {
      Type: "Pass",
      Output: { sum: "{% 1 + 2 %}", list: ["{% $uuid() %}", 3] },
      Assign: { x: "{% $states.input.x %}" },
      Next: "Task",
    },
    Task: {
      Type: "Task",
      Resource: "arn:aws:states:::lambda:invoke",
      Arguments: { FunctionName: LAMBDA, Payload: "{% $states.input %}" },
      Output: "{% $states.result.Payload %}",
      TimeoutSeconds: "{% $x * 10 %}",
      HeartbeatSeconds: "{% 5 %}",
      Credentials: { RoleArn: "{% $role %}" },
      Retry: [{ ErrorEquals: ["States.ALL"], MaxAttempts: 0 }],
      Catch: [
        {
          ErrorEquals: ["States.ALL"],
          Output: "{% $states.errorOutput %}",
          Assign: { err: "{% $states.errorOutput %}" },
          Next: "Fail",
        },
      ],
      Next: "Choice",
    },
    Choice: {
      Type: "Choice",
      Choices: [
        {
          Condition: "{% $states.input.n > 1 %}",
          Next: "Wait",
          Assign: { big: true },
          Output: { n: "{% $states.input.n %}" },
        },
      ],
      Default: "Wait2",
      Output: "{% $states.input %}",
    },
    Wait: { Type: "Wait", Seconds: "{% $x %}", Next: "Wait2" },
    Wait2: { Type: "Wait", Timestamp: "{% $states.input.when %}", Next: "Parallel" },
    Parallel: {
      Type: "Parallel",
      Arguments: "{% $states.input %}",
      Branches: [{ StartAt: "P1", States: { P1: { Type: "Pass", End: true } } }],
      Output: "{% $states.result[0] %}",
      Next: "Map",
    },
    Map: {
      Type: "Map",
      Items: "{% $states.input.items %}",
      ItemSelector: { value: "{% $states.context.Map.Item.Value %}" },
      MaxConcurrency: "{% 2 %}",
      ToleratedFailurePercentage: "{% 10 %}",
      ToleratedFailureCount: "{% 1 %}",
      ItemProcessor: { StartAt: "I", States: { I: { Type: "Pass", End: true } } },
      ItemReader: {
        Resource: "arn:aws:states:::s3:getObject",
        Arguments: { Bucket: "{% $bucket %}", Key: "k" },
        ReaderConfig: { InputType: "JSON", MaxItems: "{% 100 %}" },
      },
      ItemBatcher: { MaxItemsPerBatch: "{% 10 %}", BatchInput: { at: "{% $now() %}" } },
      ResultWriter: { Resource: "arn:aws:states:::s3:putObject", Arguments: { Bucket: "out" } },
      Next: "Done",
    },
    Done: { Type: "Succeed", Output: "{% $states.input %}" },
    Fail: { Type: "Fail", Error: "{% $err.Error %}", Cause: "{% $err.Cause %}" },
  },
};

describe("every state type and field", () => {
  it.each([
    ["JSONPath", JSONPATH],
    ["JSONata", JSONATA],
  ])("validates in %s", (_, definition) => {
    const { valid, diagnostics } = validateDefinition(definition);
    expect(diagnostics).toEqual([]);
    expect(valid).toBe(true);
  });

  it("mixes languages per state, JSONPath inside a JSONata Map (AWS verdict)", () => {
    const definition = {
      StartAt: "Map",
      States: {
        Map: {
          Type: "Map",
          QueryLanguage: "JSONata",
          ItemProcessor: {
            StartAt: "Pass",
            States: { Pass: { QueryLanguage: "JSONPath", Type: "Pass", End: true } },
          },
          End: true,
        },
      },
    };
    expect(validateDefinition(definition).valid).toBe(true);
  });
});

describe("the code registry", () => {
  it("documents every code, with a severity", () => {
    for (const [code, info] of Object.entries(CODES)) {
      expect(code).toMatch(/^[A-Z][A-Z_]+$/);
      expect(info.summary.length, code).toBeGreaterThan(10);
      expect(["error", "warning"]).toContain(info.severity);
    }
  });
});
