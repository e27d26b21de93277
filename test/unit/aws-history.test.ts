import { describe, expect, it } from "vitest";
import { awsEvent } from "../../api/aws/history.js";
import type { HistoryEvent, HistoryEventType } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";

/**
 * GetExecutionHistory's mapping (api/aws/history.ts), one kind of detail at a time,
 * as AWS's API reference ("HistoryEvent" and its `…EventDetails`) and the histories
 * recorded on AWS (test/conformance/data/histories.jsonl) show them.
 */

const T = "2024-01-01T00:00:01.500Z";
const NOT_TRUNCATED = { truncated: false };

function event(
  type: HistoryEventType,
  key?: string,
  details?: Record<string, Json | undefined>,
): HistoryEvent {
  const e: HistoryEvent = { id: 3, previousEventId: 2, timestamp: T, type };
  if (key && details) e[key as `${string}EventDetails`] = details;
  return e;
}

describe("awsEvent", () => {
  it("keeps id, previousEventId and type, and gives the timestamp in epoch seconds", () => {
    expect(awsEvent(event("ParallelStateStarted"), true)).toEqual({
      id: 3,
      previousEventId: 2,
      timestamp: 1704067201.5,
      type: "ParallelStateStarted",
    });
  });

  it("gives ExecutionStarted's input its inputDetails, next to the role", () => {
    const e = event("ExecutionStarted", "executionStartedEventDetails", {
      input: '{"a":1}',
      roleArn: "arn:aws:iam::000000000000:role/r",
    });
    expect(awsEvent(e, true).executionStartedEventDetails).toEqual({
      input: '{"a":1}',
      inputDetails: NOT_TRUNCATED,
      roleArn: "arn:aws:iam::000000000000:role/r",
    });
  });

  it("gives ExecutionSucceeded's output its outputDetails", () => {
    const e = event("ExecutionSucceeded", "executionSucceededEventDetails", { output: "[1]" });
    expect(awsEvent(e, true).executionSucceededEventDetails).toEqual({
      output: "[1]",
      outputDetails: NOT_TRUNCATED,
    });
  });

  it("gives a state's input and output their …Details", () => {
    const entered = event("PassStateEntered", "stateEnteredEventDetails", {
      name: "P",
      input: "{}",
    });
    const exited = event("MapStateExited", "stateExitedEventDetails", { name: "M", output: "[]" });
    expect(awsEvent(entered, true).stateEnteredEventDetails).toEqual({
      name: "P",
      input: "{}",
      inputDetails: NOT_TRUNCATED,
    });
    expect(awsEvent(exited, true).stateExitedEventDetails).toEqual({
      name: "M",
      output: "[]",
      outputDetails: NOT_TRUNCATED,
    });
  });

  it("gives assigned variables their assignedVariablesDetails, only where a state assigned", () => {
    const e = event("PassStateExited", "stateExitedEventDetails", {
      name: "P",
      output: "{}",
      assignedVariables: { x: "1", s: '"text"' },
    });
    expect(awsEvent(e, true).stateExitedEventDetails).toEqual({
      name: "P",
      output: "{}",
      outputDetails: NOT_TRUNCATED,
      assignedVariables: { x: "1", s: '"text"' },
      assignedVariablesDetails: NOT_TRUNCATED,
    });
    const none = event("PassStateExited", "stateExitedEventDetails", { name: "P", output: "{}" });
    expect(awsEvent(none, true).stateExitedEventDetails).not.toHaveProperty(
      "assignedVariablesDetails",
    );
  });

  it("passes EvaluationFailed's details as AWS names them", () => {
    const details = {
      error: "States.QueryEvaluationError",
      cause: "An error occurred…",
      location: "Output/result",
      state: "S",
    };
    const e = event("EvaluationFailed", "evaluationFailedEventDetails", details);
    expect(awsEvent(e, true).evaluationFailedEventDetails).toEqual(details);
  });

  it("leaves out the error Stepwise keeps with MapStateFailed and ParallelStateFailed", () => {
    for (const type of ["MapStateFailed", "ParallelStateFailed"] as const) {
      const e = event(type, "evaluationFailedEventDetails", { error: "E", cause: "C" });
      expect(awsEvent(e, true)).toEqual({
        id: 3,
        previousEventId: 2,
        timestamp: 1704067201.5,
        type,
      });
    }
  });

  it("gives task events' inputs and outputs their …Details, and TaskScheduled's parameters none", () => {
    const cases: [HistoryEventType, string, Record<string, Json>, string][] = [
      [
        "ActivityScheduled",
        "activityScheduledEventDetails",
        { resource: "a", input: "{}" },
        "inputDetails",
      ],
      ["ActivitySucceeded", "activitySucceededEventDetails", { output: "1" }, "outputDetails"],
      [
        "LambdaFunctionScheduled",
        "lambdaFunctionScheduledEventDetails",
        { resource: "f", input: "{}" },
        "inputDetails",
      ],
      [
        "LambdaFunctionSucceeded",
        "lambdaFunctionSucceededEventDetails",
        { output: "1" },
        "outputDetails",
      ],
      [
        "TaskSubmitted",
        "taskSubmittedEventDetails",
        { resourceType: "sqs", resource: "sendMessage.waitForTaskToken", output: "{}" },
        "outputDetails",
      ],
      [
        "TaskSucceeded",
        "taskSucceededEventDetails",
        { resourceType: "lambda", resource: "invoke", output: "{}" },
        "outputDetails",
      ],
    ];
    for (const [type, key, details, paired] of cases) {
      expect(awsEvent(event(type, key, details), true)[key], type).toEqual({
        ...details,
        [paired]: NOT_TRUNCATED,
      });
    }
    const scheduled = event("TaskScheduled", "taskScheduledEventDetails", {
      resourceType: "lambda",
      resource: "invoke",
      region: "local",
      parameters: "{}",
      timeoutInSeconds: undefined,
    });
    expect(awsEvent(scheduled, true).taskScheduledEventDetails).toEqual({
      resourceType: "lambda",
      resource: "invoke",
      region: "local",
      parameters: "{}",
    });
  });

  it("drops fields without a value (an optional timeout not set)", () => {
    const e = event("ExecutionFailed", "executionFailedEventDetails", {
      error: "E",
      cause: undefined,
    });
    const out = awsEvent(e, true);
    expect(out.executionFailedEventDetails).toEqual({ error: "E" });
    expect(Object.keys(out.executionFailedEventDetails as object)).toEqual(["error"]);
  });

  it("leaves out the data and its …Details without includeExecutionData", () => {
    const exited = event("PassStateExited", "stateExitedEventDetails", {
      name: "P",
      output: "{}",
      assignedVariables: { x: "1" },
    });
    expect(awsEvent(exited, false).stateExitedEventDetails).toEqual({ name: "P" });
    const started = event("ExecutionStarted", "executionStartedEventDetails", {
      input: "{}",
      roleArn: "r",
    });
    expect(awsEvent(started, false).executionStartedEventDetails).toEqual({ roleArn: "r" });
    const scheduled = event("ActivityScheduled", "activityScheduledEventDetails", {
      resource: "a",
      input: "{}",
    });
    expect(awsEvent(scheduled, false).activityScheduledEventDetails).toEqual({ resource: "a" });
  });

  it("keeps Stepwise's own fields next to AWS's", () => {
    const e = event("ExecutionStarted", "executionStartedEventDetails", {
      input: "{}",
      roleArn: "r",
      callerName: "ops",
    });
    expect(awsEvent(e, true).executionStartedEventDetails).toMatchObject({ callerName: "ops" });
  });
});
