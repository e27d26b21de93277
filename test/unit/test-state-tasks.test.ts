import { describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import { testState, TestStateError } from "../../engine/testing/test-state.js";
import { runnerTasks } from "../../api/test-state.js";
import type { TaskRunner } from "../../task-runners/index.js";

/**
 * TestState's Task without a mock, on the pure step (issue #36): the request's
 * `tasks` are called as an execution calls its runners (AWS API reference,
 * TestState: "you can test ... An AWS service integration request and response";
 * "TestState only supports the following when a mock is specified: Activity tasks,
 * .sync or .waitForTaskToken service integration patterns").
 */
const base = { now: "2024-01-01T00:00:00.000Z", seed: "seed" };

describe("testState calling the resource", () => {
  it("calls the handler with the effective input; DEBUG shows its result", async () => {
    const calls: Json[] = [];
    const result = await testState({
      ...base,
      definition: {
        Type: "Task",
        Resource: "function:price",
        Parameters: { "sku.$": "$.sku" },
        ResultSelector: { "cents.$": "$.amount" },
        ResultPath: "$.price",
        End: true,
      },
      input: { sku: "A-1" },
      inspectionLevel: "DEBUG",
      tasks: {
        "function:price": (input) => {
          calls.push(input);
          return { amount: 250 };
        },
      },
    });
    expect(calls).toEqual([{ sku: "A-1" }]);
    expect(result).toMatchObject({
      status: "SUCCEEDED",
      output: { sku: "A-1", price: { cents: 250 } },
      inspectionData: { result: { amount: 250 }, afterResultSelector: { cents: 250 } },
    });
  });

  it("a mock wins over the handler", async () => {
    const result = await testState({
      ...base,
      definition: { Type: "Task", Resource: "function:price", End: true },
      input: {},
      mock: { result: { mocked: true } },
      tasks: {
        "function:price": () => {
          throw new Error("called");
        },
      },
    });
    expect(result).toMatchObject({ status: "SUCCEEDED", output: { mocked: true } });
  });

  it.each([
    "arn:aws:states:::lambda:invoke.waitForTaskToken",
    "arn:aws:states:::states:startExecution.sync",
    "arn:aws:states:::states:startExecution.sync:2",
    "arn:aws:states:us-east-1:123456789012:activity:review",
    "arn:aws:states:::stepwise:approval",
  ])("%s without a mock is refused", async (resource) => {
    await expect(
      testState({
        ...base,
        definition: { Type: "Task", Resource: resource, End: true },
        input: {},
        tasks: () => () => ({}),
      }),
    ).rejects.toBeInstanceOf(TestStateError);
  });

  it("runnerTasks: a call past the time limit fails with States.Timeout", async () => {
    const slow: TaskRunner = {
      name: "slow",
      handles: (r) => r === "function:slow",
      run: (request) =>
        new Promise((_resolve, reject) =>
          request.signal.addEventListener("abort", () => reject(new Error("aborted"))),
        ),
    };
    const result = await testState({
      ...base,
      definition: { Type: "Task", Resource: "function:slow", End: true },
      input: {},
      tasks: runnerTasks([slow], 50),
    });
    expect(result).toMatchObject({ status: "FAILED", error: "States.Timeout" });
  });
});
