import { describe, expect, it } from "vitest";
import {
  childInput,
  derivedChildName,
  parseChildRequest,
  parseMachineArn,
  STARTED_BY,
} from "../../runtime/children/child-parameters.js";
import { TaskError } from "../../task-runners/runner.js";
import {
  childPattern,
  isChildExecution,
  waitsForCallback,
  waitsForChild,
} from "../../task-runners/resources.js";

const PARENT = "arn:aws:states:us-east-1:123456789012:execution:parent:run-1";
const MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:child";

describe("states:startExecution resources", () => {
  it("names the pattern of each spelling", () => {
    expect(childPattern("arn:aws:states:::states:startExecution")).toBe("start");
    expect(childPattern("arn:aws:states:::states:startExecution.sync")).toBe("sync");
    expect(childPattern("arn:aws:states:::states:startExecution.sync:2")).toBe("sync:2");
    expect(childPattern("arn:aws:states:::states:startExecution.waitForTaskToken")).toBe(
      "waitForTaskToken",
    );
    expect(childPattern("arn:aws:states:::states:startExecution.sync:3")).toBeUndefined();
    expect(childPattern("arn:aws:states:::lambda:invoke")).toBeUndefined();
    expect(isChildExecution("arn:aws:states:::states:startExecution.sync:2")).toBe(true);
  });

  it(".sync and .sync:2 wait on a token, as .waitForTaskToken does; fire and forget does not", () => {
    expect(waitsForChild("arn:aws:states:::states:startExecution.sync")).toBe(true);
    expect(waitsForCallback("arn:aws:states:::states:startExecution.sync:2")).toBe(true);
    expect(waitsForCallback("arn:aws:states:::states:startExecution.waitForTaskToken")).toBe(true);
    expect(waitsForCallback("arn:aws:states:::states:startExecution")).toBe(false);
    // Other services' .sync is not a child execution's.
    expect(waitsForChild("arn:aws:states:::glue:startJobRun.sync")).toBe(false);
  });
});

describe("parseMachineArn", () => {
  it("takes a state machine ARN, its version or alias ARN, or a bare name", () => {
    expect(parseMachineArn(MACHINE)).toEqual({ machine: "child" });
    expect(parseMachineArn(`${MACHINE}:3`)).toEqual({ machine: "child", version: 3 });
    expect(parseMachineArn(`${MACHINE}:prod`)).toEqual({ machine: "child", alias: "prod" });
    expect(parseMachineArn("child")).toEqual({ machine: "child" });
  });

  it("refuses what names no state machine", () => {
    expect(() => parseMachineArn(undefined)).toThrow(TaskError);
    expect(() => parseMachineArn(42)).toThrow(/StateMachineArn/);
    expect(() => parseMachineArn("arn:aws:states:us-east-1:1:activity:x")).toThrow(TaskError);
  });
});

describe("childInput", () => {
  it("adds the parent's execution id to an object, as AWS does", () => {
    expect(childInput({ a: 1 }, PARENT)).toEqual({ a: 1, [STARTED_BY]: PARENT });
    expect(childInput(undefined, PARENT)).toEqual({ [STARTED_BY]: PARENT });
  });

  it("takes a string as the input's JSON text, unchanged", () => {
    expect(childInput('{"a":[1,2]}', PARENT)).toEqual({ a: [1, 2] });
    expect(() => childInput("{not json", PARENT)).toThrow(
      expect.objectContaining({ error: "StepFunctions.InvalidExecutionInputException" }),
    );
  });

  it("passes an array or a number as it is", () => {
    expect(childInput([1, 2], PARENT)).toEqual([1, 2]);
    expect(childInput(7, PARENT)).toBe(7);
  });
});

describe("parseChildRequest", () => {
  it("reads StateMachineArn, Input and Name", () => {
    const request = parseChildRequest(
      "arn:aws:states:::states:startExecution.sync:2",
      { StateMachineArn: `${MACHINE}:2`, Input: { x: true }, Name: "nightly-1" },
      PARENT,
    );
    expect(request).toEqual({
      pattern: "sync:2",
      machine: "child",
      version: 2,
      input: { x: true, [STARTED_BY]: PARENT },
      name: "nightly-1",
    });
  });

  it("refuses a bad Name and Parameters that are not an object", () => {
    const resource = "arn:aws:states:::states:startExecution";
    expect(() =>
      parseChildRequest(resource, { StateMachineArn: MACHINE, Name: "a b" }, PARENT),
    ).toThrow(expect.objectContaining({ error: "StepFunctions.InvalidNameException" }));
    expect(() => parseChildRequest(resource, [1], PARENT)).toThrow(/Parameters/);
    expect(() => parseChildRequest("arn:aws:states:::lambda:invoke", {}, PARENT)).toThrow(
      TaskError,
    );
  });
});

describe("derivedChildName", () => {
  it("is stable for one attempt, new for the next, and a valid execution name", () => {
    const a = derivedChildName("op-1", 0);
    expect(derivedChildName("op-1", 0)).toBe(a);
    expect(derivedChildName("op-1", 1)).not.toBe(a);
    expect(derivedChildName("op-2", 0)).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
