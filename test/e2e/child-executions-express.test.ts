import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  SFNClient,
  StartExecutionCommand,
  type HistoryEvent,
} from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sfn } from "../aws/helpers.js";
import { startStack, type Stack } from "./stack.js";

/**
 * `states:startExecution.sync` / `.sync:2` whose target is an EXPRESS state machine,
 * through bin/stepwise.js with the AWS SDK. AWS lets a Standard parent run an Express
 * child and wait for it (nested workflows, "Run a Job"); the task's result is the
 * child's description as DescribeExecution's fields in PascalCase (`.sync:2` with
 * `Input` and `Output` parsed, `.sync` with them as JSON text), and a child that
 * fails fails the task with `States.TaskFailed`, its cause that description.
 */
let stack: Stack;
let client: SFNClient;
const ROLE = "arn:aws:iam::123456789012:role/r";

beforeAll(async () => {
  stack = await startStack();
  client = sfn(stack);
}, 60_000);

afterAll(async () => {
  client?.destroy();
  await stack?.close();
});

async function create(name: string, definition: object, type: "STANDARD" | "EXPRESS") {
  const { stateMachineArn } = await client.send(
    new CreateStateMachineCommand({
      name,
      definition: JSON.stringify(definition),
      roleArn: ROLE,
      type,
    }),
  );
  return stateMachineArn!;
}

function parent(resource: string, child: string, extra: object = {}) {
  return {
    StartAt: "Run",
    States: {
      Run: {
        Type: "Task",
        Resource: resource,
        Parameters: { StateMachineArn: child, Input: { "n.$": "$.n" } },
        End: true,
        ...extra,
      },
    },
  };
}

async function run(stateMachineArn: string, input: object) {
  const { executionArn } = await client.send(
    new StartExecutionCommand({ stateMachineArn, input: JSON.stringify(input) }),
  );
  const described = await stack.client.until(async () => {
    const d = await client.send(new DescribeExecutionCommand({ executionArn }));
    return d.status !== "RUNNING" ? d : undefined;
  }, 30_000);
  const history = await client.send(new GetExecutionHistoryCommand({ executionArn }));
  return { executionArn: executionArn!, described, events: history.events! };
}

const taskEvents = (events: HistoryEvent[]) =>
  events.map((e) => e.type!).filter((t) => t.startsWith("Task") && !t.startsWith("TaskState"));

describe("states:startExecution.sync of an EXPRESS child", () => {
  let echo: string;
  let boom: string;

  beforeAll(async () => {
    echo = await create(
      "express-echo",
      {
        StartAt: "Echo",
        States: {
          Echo: {
            Type: "Pass",
            Parameters: {
              "twice.$": "States.MathAdd($.n, $.n)",
              "startedBy.$": "$.AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID",
              "name.$": "$$.Execution.Name",
            },
            End: true,
          },
        },
      },
      "EXPRESS",
    );
    boom = await create(
      "express-boom",
      {
        StartAt: "Boom",
        States: { Boom: { Type: "Fail", Error: "Child.Boom", Cause: "the child broke" } },
      },
      "EXPRESS",
    );
  });

  it(".sync:2 waits for the child and answers its description, Input and Output parsed", async () => {
    const machine = await create(
      "parent-express-sync2",
      parent("arn:aws:states:::states:startExecution.sync:2", echo),
      "STANDARD",
    );
    const { executionArn, described, events } = await run(machine, { n: 21 });
    expect(described.status, JSON.stringify(described)).toBe("SUCCEEDED");
    const output = JSON.parse(described.output!);
    expect(output).toMatchObject({
      StateMachineArn: echo,
      Status: "SUCCEEDED",
      Input: { n: 21, AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: executionArn },
      InputDetails: { Included: true },
      Output: { twice: 42, startedBy: executionArn },
      OutputDetails: { Included: true },
    });
    // An Express execution's ARN and its name, as the child saw it.
    expect(output.ExecutionArn).toMatch(
      new RegExp(`^arn:aws:states:us-east-1:123456789012:express:express-echo:${output.Name}:`),
    );
    expect(output.Output.name).toBe(output.Name);
    expect(typeof output.StartDate).toBe("number");
    expect(output.StopDate).toBeGreaterThanOrEqual(output.StartDate);
    expect(taskEvents(events)).toEqual(["TaskScheduled", "TaskStarted", "TaskSucceeded"]);
    const succeeded = events.find((e) => e.type === "TaskSucceeded")!;
    expect(JSON.parse(succeeded.taskSucceededEventDetails!.output!)).toEqual(output);
  });

  it(".sync answers the same description with Input and Output as JSON text", async () => {
    const machine = await create(
      "parent-express-sync",
      parent("arn:aws:states:::states:startExecution.sync", echo),
      "STANDARD",
    );
    const { executionArn, described } = await run(machine, { n: 5 });
    expect(described.status, JSON.stringify(described)).toBe("SUCCEEDED");
    const output = JSON.parse(described.output!);
    expect(output.Status).toBe("SUCCEEDED");
    expect(typeof output.Input).toBe("string");
    expect(typeof output.Output).toBe("string");
    expect(JSON.parse(output.Output)).toMatchObject({ twice: 10, startedBy: executionArn });
  });

  it("a failing child fails the task with States.TaskFailed, which a Catch takes", async () => {
    const machine = await create(
      "parent-express-fails",
      {
        StartAt: "Run",
        States: {
          Run: {
            ...parent("arn:aws:states:::states:startExecution.sync:2", boom).States.Run,
            Catch: [{ ErrorEquals: ["States.TaskFailed"], Next: "Caught" }],
          },
          Caught: { Type: "Pass", End: true },
        },
      },
      "STANDARD",
    );
    const { described, events } = await run(machine, { n: 1 });
    expect(described.status, JSON.stringify(described)).toBe("SUCCEEDED");
    const caught = JSON.parse(described.output!);
    expect(caught.Error).toBe("States.TaskFailed");
    const cause = JSON.parse(caught.Cause);
    expect(cause).toMatchObject({
      StateMachineArn: boom,
      Status: "FAILED",
      Error: "Child.Boom",
      Cause: "the child broke",
    });
    expect(cause.ExecutionArn).toContain(":express:express-boom:");
    expect(taskEvents(events)).toEqual(["TaskScheduled", "TaskStarted", "TaskFailed"]);
  });

  it("fire and forget still answers StartExecution's result at once", async () => {
    const machine = await create(
      "parent-express-start",
      parent("arn:aws:states:::states:startExecution", echo),
      "STANDARD",
    );
    const { described } = await run(machine, { n: 2 });
    expect(described.status).toBe("SUCCEEDED");
    const output = JSON.parse(described.output!);
    expect(Object.keys(output).sort()).toEqual(["ExecutionArn", "StartDate"]);
    expect(output.ExecutionArn).toContain(":express:express-echo:");
  });
});
