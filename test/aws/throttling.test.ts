import { CreateStateMachineCommand, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, startStack, type Stack } from "../e2e/stack.js";
import { failure, PASS, RUNNER, sfn } from "./helpers.js";

/**
 * StartExecution through the AWS endpoint shares the REST start's admission control:
 * past the key's burst the SDK gets ThrottlingException, and nothing is started.
 */
let stack: Stack;
let arn: string;

beforeAll(async () => {
  stack = await startStack({
    env: { STEPWISE_START_RATE: "1", STEPWISE_START_BURST: "3", STEPWISE_MAX_BACKLOG: "0" },
  });
  const created = await sfn(stack).send(
    new CreateStateMachineCommand({
      name: "limited",
      definition: PASS,
      roleArn: "arn:aws:iam::123456789012:role/stepwise",
    }),
  );
  arn = created.stateMachineArn!;
});

afterAll(async () => {
  await stack?.close();
});

describe("AWS StartExecution throttling", () => {
  it("refuses starts past the burst with ThrottlingException, as the REST start does", async () => {
    const client = sfn(stack, RUNNER);
    for (let i = 0; i < 3; i++) {
      const started = await client.send(new StartExecutionCommand({ stateMachineArn: arn }));
      expect(started.executionArn).toMatch(/:execution:limited:/);
    }
    const refused = await failure(client.send(new StartExecutionCommand({ stateMachineArn: arn })));
    expect(refused.name).toBe("ThrottlingException");
    expect(refused.status).toBe(400);
    // The REST start of the same key draws on the same bucket.
    const rest = await stack.client.post(
      "/v1/state-machines/limited/executions",
      {},
      { key: KEYS.run },
    );
    expect(rest.status).toBe(429);
    const listed = await stack.client.get("/v1/executions?stateMachine=limited");
    expect(listed.body.items).toHaveLength(3);
  });
});
