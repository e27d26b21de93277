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
import { startFakeServer, type FakeServer } from "../e2e/fake-server.js";
import { startStack, type Stack } from "../e2e/stack.js";
import { failure, sfn } from "./helpers.js";

/** RedriveExecution through the real AWS SDK: redriveStatus, redriveCount, the history. */
let stack: Stack;
/** A service that fails item 3 the first time (late, once its siblings succeeded). */
let service: FakeServer;
let failed3 = false;

beforeAll(async () => {
  service = await startFakeServer((request) => {
    const item = (request.body as { item?: number } | undefined)?.item;
    if (item === 3 && !failed3) {
      failed3 = true;
      return { status: 503, body: {}, delayMs: 600 };
    }
    return { body: { squared: (item ?? 0) ** 2 } };
  });
  stack = await startStack({ egressAllow: "127.0.0.1" });
});

afterAll(async () => {
  await stack?.close();
  await service?.close();
});

async function until(client: ReturnType<typeof sfn>, executionArn: string, status: string) {
  for (;;) {
    const d = await client.send(new DescribeExecutionCommand({ executionArn }));
    if (d.status === status) return d;
    await new Promise((r) => setTimeout(r, 50));
  }
}

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

  it("redrives a failed Map: only its failed iteration runs again (AWS: inline Map)", async () => {
    const client = sfn(stack);
    const machine = await client.send(
      new CreateStateMachineCommand({
        name: "squares",
        roleArn: "arn:aws:iam::123456789012:role/stepwise",
        definition: JSON.stringify({
          StartAt: "Each",
          States: {
            Each: {
              Type: "Map",
              ItemProcessor: {
                StartAt: "Square",
                States: {
                  Square: {
                    Type: "Task",
                    Resource: "arn:aws:states:::http:invoke",
                    Parameters: {
                      ApiEndpoint: `${service.url}/square`,
                      Method: "POST",
                      RequestBody: { "item.$": "$" },
                    },
                    OutputPath: "$.ResponseBody.squared",
                    End: true,
                  },
                },
              },
              End: true,
            },
          },
        }),
      }),
    );
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: machine.stateMachineArn, input: "[1,2,3,4,5]" }),
    );
    const failed = await until(client, executionArn!, "FAILED");
    expect(failed).toMatchObject({
      error: "States.Http.StatusCode.503",
      redriveStatus: "REDRIVABLE",
    });
    const calls = () => service.requests.map((r) => (r.body as { item: number }).item).sort();
    expect(calls()).toEqual([1, 2, 3, 4, 5]);

    await client.send(new RedriveExecutionCommand({ executionArn }));
    const done = await until(client, executionArn!, "SUCCEEDED");
    expect(JSON.parse(done.output!)).toEqual([1, 4, 9, 16, 25]);
    expect(done.redriveCount).toBe(1);
    expect(calls()).toEqual([1, 2, 3, 3, 4, 5]);
  });
});
