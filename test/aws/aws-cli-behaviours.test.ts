import {
  CreateStateMachineAliasCommand,
  CreateStateMachineCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  PublishStateMachineVersionCommand,
  SFNClient,
  StartExecutionCommand,
} from "@aws-sdk/client-sfn";
import { describe, expect, it } from "vitest";
import { KEYS, type Stack } from "../e2e/stack.js";
import { ended, failure, awsStackPerFile } from "./helpers.js";

/**
 * Smaller AWS behaviours an AWS CLI session found different (issue 36), each as AWS
 * answers it, through `stepwise serve` and the AWS SDK.
 */
let stack: Stack;
let client: SFNClient;
const ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:";
const ROLE = "arn:aws:iam::123456789012:role/r";
const PASS = JSON.stringify({ StartAt: "P", States: { P: { Type: "Pass", End: true } } });

awsStackPerFile((opened) => ({ stack, client } = opened));

describe("AWS's answers", () => {
  it("ListExecutions of an EXPRESS machine is StateMachineTypeNotSupported (its executions are not kept)", async () => {
    await client.send(
      new CreateStateMachineCommand({
        name: "quick",
        definition: PASS,
        roleArn: ROLE,
        type: "EXPRESS",
      }),
    );
    const f = await failure(
      client.send(new ListExecutionsCommand({ stateMachineArn: ARN + "quick" })),
    );
    expect(f.name).toBe("StateMachineTypeNotSupported");
    // A STANDARD machine lists as before.
    await client.send(
      new CreateStateMachineCommand({ name: "kept", definition: PASS, roleArn: ROLE }),
    );
    const listed = await client.send(new ListExecutionsCommand({ stateMachineArn: ARN + "kept" }));
    expect(listed.executions).toEqual([]);
  });

  it("CreateStateMachineAlias routing to a version that does not exist is ResourceNotFound", async () => {
    await client.send(
      new CreateStateMachineCommand({ name: "aliased", definition: PASS, roleArn: ROLE }),
    );
    await client.send(new PublishStateMachineVersionCommand({ stateMachineArn: ARN + "aliased" }));
    const f = await failure(
      client.send(
        new CreateStateMachineAliasCommand({
          name: "live",
          routingConfiguration: [{ stateMachineVersionArn: ARN + "aliased:7", weight: 100 }],
        }),
      ),
    );
    expect(f.name).toBe("ResourceNotFound");
    const made = await client.send(
      new CreateStateMachineAliasCommand({
        name: "live",
        routingConfiguration: [{ stateMachineVersionArn: ARN + "aliased:1", weight: 100 }],
      }),
    );
    expect(made.stateMachineAliasArn).toBe(ARN + "aliased:live");
  });

  it("a request signed 20 minutes in the future is 'not yet current', one 20 minutes old 'expired'", async () => {
    const skewed = (offsetMs: number) =>
      new SFNClient({
        endpoint: stack.url,
        region: "us-east-1",
        credentials: { accessKeyId: "ops", secretAccessKey: KEYS.admin },
        systemClockOffset: offsetMs,
        maxAttempts: 1,
      });
    const ahead = skewed(20 * 60_000);
    const behind = skewed(-20 * 60_000);
    try {
      const later = await failure(ahead.send(new ListStateMachinesCommand({})));
      expect(later.name).toBe("InvalidSignatureException");
      expect(later.message).toMatch(/^Signature not yet current: \d{8}T\d{6}Z is still later than/);
      const earlier = await failure(behind.send(new ListStateMachinesCommand({})));
      expect(earlier.message).toMatch(/^Signature expired: \d{8}T\d{6}Z is now earlier than/);
    } finally {
      ahead.destroy();
      behind.destroy();
    }
  });

  it("ExecutionStarted carries the state machine's role, as it was when the execution started", async () => {
    const created = await client.send(
      new CreateStateMachineCommand({ name: "roled", definition: PASS, roleArn: ROLE }),
    );
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: created.stateMachineArn }),
    );
    await ended(client, executionArn!);
    const history = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    expect(history.events![0]!.executionStartedEventDetails!.roleArn).toBe(ROLE);
  });
});
