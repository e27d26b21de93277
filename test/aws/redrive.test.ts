import {
  CreateActivityCommand,
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  GetActivityTaskCommand,
  GetExecutionHistoryCommand,
  RedriveExecutionCommand,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
} from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../e2e/stack.js";
import { failure, sfn } from "./helpers.js";

/** RedriveExecution through the real AWS SDK: redriveStatus, redriveCount, the history. */
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.close();
});

describe("AWS RedriveExecution", () => {
  it("redrives a failed execution, which then succeeds; DescribeExecution counts it", async () => {
    const client = sfn(stack);
    const activity = await client.send(new CreateActivityCommand({ name: "review" }));
    const machine = await client.send(
      new CreateStateMachineCommand({
        name: "reviewed",
        roleArn: "arn:aws:iam::123456789012:role/stepwise",
        definition: JSON.stringify({
          StartAt: "Review",
          States: { Review: { Type: "Task", Resource: activity.activityArn, End: true } },
        }),
      }),
    );
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: machine.stateMachineArn, input: '{"doc":1}' }),
    );
    const first = await client.send(
      new GetActivityTaskCommand({ activityArn: activity.activityArn }),
    );
    await client.send(
      new SendTaskFailureCommand({ taskToken: first.taskToken, error: "Rejected" }),
    );
    const failed = await (async () => {
      for (;;) {
        const d = await client.send(new DescribeExecutionCommand({ executionArn }));
        if (d.status === "FAILED") return d;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    expect(failed).toMatchObject({ redriveCount: 0, redriveStatus: "REDRIVABLE" });

    const redriven = await client.send(
      new RedriveExecutionCommand({ executionArn, clientToken: "once" }),
    );
    expect(redriven.redriveDate).toBeInstanceOf(Date);
    const second = await client.send(
      new GetActivityTaskCommand({ activityArn: activity.activityArn }),
    );
    expect(second.input).toBe('{"doc":1}');
    await client.send(
      new SendTaskSuccessCommand({ taskToken: second.taskToken, output: '{"ok":true}' }),
    );
    const done = await (async () => {
      for (;;) {
        const d = await client.send(new DescribeExecutionCommand({ executionArn }));
        if (d.status === "SUCCEEDED") return d;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    expect(done).toMatchObject({ redriveCount: 1, output: '{"ok":true}' });
    expect(done.redriveDate).toBeInstanceOf(Date);
    const history = await client.send(
      new GetExecutionHistoryCommand({ executionArn, maxResults: 100 }),
    );
    const types = history.events!.map((e) => e.type);
    expect(types).toContain("ExecutionRedriven");
    expect(types.at(-1)).toBe("ExecutionSucceeded");

    const refused = await failure(client.send(new RedriveExecutionCommand({ executionArn })));
    expect(refused.name).toBe("ExecutionNotRedrivable");
  });
});
