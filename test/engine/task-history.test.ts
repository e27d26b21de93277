import { describe, expect, it } from "vitest";
import { details, execute, single, types } from "./helpers.js";

// AWS names a Task state's history after its resource: Activity* for activities,
// LambdaFunction* for legacy Lambda ARNs, Task* for everything else.
const ACTIVITY = "arn:aws:states:us-east-1:123456789012:activity:review";
const LEGACY_LAMBDA = "arn:aws:lambda:us-east-1:123456789012:function:f";

describe("Task history by resource kind", () => {
  it("an activity: ActivityScheduled, ActivityStarted when taken, ActivitySucceeded", async () => {
    const r = await execute(
      single({
        Type: "Task",
        Resource: ACTIVITY,
        TimeoutSeconds: 60,
        HeartbeatSeconds: 10,
        End: true,
      }),
      { input: { doc: 1 }, mocks: { S: [{ Return: { ok: true } }] } },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(types(r.history)).toEqual([
      "ExecutionStarted",
      "TaskStateEntered",
      "ActivityScheduled",
      "ActivityStarted",
      "ActivitySucceeded",
      "TaskStateExited",
      "ExecutionSucceeded",
    ]);
    expect(details(r.history[2]!)).toEqual({
      resource: ACTIVITY,
      input: '{"doc":1}',
      timeoutInSeconds: 60,
      heartbeatInSeconds: 10,
      operationKey: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(details(r.history[4]!)).toEqual({ output: '{"ok":true}' });
  });

  it("an activity that fails: ActivityFailed with error and cause", async () => {
    const r = await execute(single({ Type: "Task", Resource: ACTIVITY, End: true }), {
      mocks: { S: [{ Throw: { Error: "Nope", Cause: "because" } }] },
    });
    expect(r.status).toBe("FAILED");
    const failed = r.history.find((e) => e.type === "ActivityFailed")!;
    expect(details(failed)).toEqual({ error: "Nope", cause: "because" });
  });

  it("a legacy Lambda ARN: LambdaFunctionScheduled, LambdaFunctionStarted, LambdaFunctionSucceeded", async () => {
    const r = await execute(
      single({ Type: "Task", Resource: LEGACY_LAMBDA, TimeoutSeconds: 5, End: true }),
      {
        input: { a: 1 },
        mocks: { S: [{ Return: 7 }] },
      },
    );
    expect(types(r.history).slice(2, 5)).toEqual([
      "LambdaFunctionScheduled",
      "LambdaFunctionStarted",
      "LambdaFunctionSucceeded",
    ]);
    expect(details(r.history[2]!)).toEqual({
      resource: LEGACY_LAMBDA,
      input: '{"a":1}',
      timeoutInSeconds: 5,
      operationKey: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(r.history[3]).not.toHaveProperty("lambdaFunctionStartedEventDetails");
    expect(details(r.history[4]!)).toEqual({ output: "7" });
  });

  it("a service integration keeps Task* with resourceType and resource", async () => {
    const r = await execute(
      single({ Type: "Task", Resource: "arn:aws:states:::lambda:invoke", End: true }),
      {
        mocks: { S: [{ Return: 1 }] },
      },
    );
    expect(types(r.history).slice(2, 5)).toEqual(["TaskScheduled", "TaskStarted", "TaskSucceeded"]);
    expect(details(r.history[3]!)).toEqual({ resourceType: "lambda", resource: "invoke" });
  });
});
