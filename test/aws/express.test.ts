import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StartSyncExecutionCommand,
} from "@aws-sdk/client-sfn";
import { describe, expect, it } from "vitest";
import { type Stack } from "../e2e/stack.js";
import { PASS, failure, awsStackPerFile } from "./helpers.js";

let stack: Stack;
let client: SFNClient;

awsStackPerFile((opened) => ({ stack, client } = opened));

const CHECK = JSON.stringify({
  StartAt: "Double",
  States: {
    Double: {
      Type: "Pass",
      Parameters: { "n.$": "States.MathAdd($.n, $.n)" },
      Next: "Big?",
    },
    "Big?": {
      Type: "Choice",
      Choices: [{ Variable: "$.n", NumericGreaterThan: 10, Next: "TooBig" }],
      Default: "Done",
    },
    TooBig: { Type: "Fail", Error: "TooBig", Cause: "over ten" },
    Done: { Type: "Succeed" },
  },
});

describe("Express machines through the AWS SDK", () => {
  it("runs StartSyncExecution to its end and keeps nothing", async () => {
    const { stateMachineArn } = await client.send(
      new CreateStateMachineCommand({
        name: "quick",
        definition: CHECK,
        roleArn: "r",
        type: "EXPRESS",
      }),
    );
    const ok = await client.send(
      new StartSyncExecutionCommand({ stateMachineArn, input: '{"n":3}', name: "q1" }),
    );
    expect(ok).toMatchObject({
      status: "SUCCEEDED",
      output: '{"n":6}',
      input: '{"n":3}',
      name: "q1",
      stateMachineArn,
    });
    expect(ok.executionArn).toMatch(/^arn:aws:states:us-east-1:123456789012:express:quick:q1:/);
    expect(ok.startDate).toBeInstanceOf(Date);
    expect(ok.stopDate).toBeInstanceOf(Date);
    expect(ok.billingDetails!.billedDurationInMilliseconds).toBeGreaterThanOrEqual(100);
    const failed = await client.send(
      new StartSyncExecutionCommand({ stateMachineArn, input: '{"n":8}' }),
    );
    expect(failed).toMatchObject({ status: "FAILED", error: "TooBig", cause: "over ten" });

    const async = await client.send(
      new StartExecutionCommand({ stateMachineArn, input: '{"n":1}' }),
    );
    expect(async.executionArn).toMatch(/:express:quick:/);
    expect(
      await failure(
        client.send(new DescribeExecutionCommand({ executionArn: async.executionArn })),
      ),
    ).toMatchObject({ name: "ExecutionDoesNotExist" });
    // Nothing of an Express execution is kept, and AWS does not list them either.
    expect(
      await failure(client.send(new ListExecutionsCommand({ stateMachineArn }))),
    ).toMatchObject({ name: "StateMachineTypeNotSupported" });
  });

  it("refuses StartSyncExecution of a STANDARD machine", async () => {
    const { stateMachineArn } = await client.send(
      new CreateStateMachineCommand({ name: "slow", definition: PASS, roleArn: "r" }),
    );
    expect(
      await failure(client.send(new StartSyncExecutionCommand({ stateMachineArn }))),
    ).toMatchObject({ name: "StateMachineTypeNotSupported" });
  });
});
