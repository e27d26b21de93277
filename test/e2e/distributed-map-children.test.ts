import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
} from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ended, sfn } from "../aws/helpers.js";
import { startStack, type Stack } from "./stack.js";

/**
 * A Distributed Map's items run as child executions (issues #37, #36), through
 * bin/stepwise.js: each item is an execution of its own under the Map Run, listed by
 * ListExecutions(mapRunArn) and `GET /v1/executions?mapRun=`, with its own history
 * (ExecutionStarted … ExecutionSucceeded, ids from 1); the parent's history has the
 * Map Run's events and no iteration.
 */
let stack: Stack;
let client: SFNClient;

beforeAll(async () => {
  stack = await startStack();
  client = sfn(stack);
}, 60_000);

afterAll(async () => {
  client?.destroy();
  await stack?.close();
});

const DEFINITION = {
  StartAt: "Fan",
  States: {
    Fan: {
      Type: "Map",
      Label: "Items",
      ItemSelector: { "n.$": "$$.Map.Item.Value" },
      ItemProcessor: {
        ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
        StartAt: "Double",
        States: {
          Double: {
            Type: "Pass",
            Parameters: { "twice.$": "States.MathAdd($.n, $.n)" },
            End: true,
          },
        },
      },
      End: true,
    },
  },
};

describe("Distributed Map: child executions", () => {
  it("runs each item as a child execution with a history of its own", async () => {
    const { stateMachineArn } = await client.send(
      new CreateStateMachineCommand({
        name: "fan-children",
        definition: JSON.stringify(DEFINITION),
        roleArn: "arn:aws:iam::123456789012:role/r",
      }),
    );
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn, input: JSON.stringify([1, 2, 3]) }),
    );
    await ended(client, executionArn!);
    const done = await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(done.status).toBe("SUCCEEDED");
    expect(JSON.parse(done.output!)).toEqual([{ twice: 2 }, { twice: 4 }, { twice: 6 }]);

    // The parent: the Map Run's events, no iteration.
    const parent = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    const types = parent.events!.map((e) => e.type);
    expect(types).toEqual([
      "ExecutionStarted",
      "MapStateEntered",
      "MapStateStarted",
      "MapRunStarted",
      "MapRunSucceeded",
      "MapStateSucceeded",
      "MapStateExited",
      "ExecutionSucceeded",
    ]);
    const mapRunArn = parent.events!.find((e) => e.type === "MapRunStarted")!
      .mapRunStartedEventDetails!.mapRunArn!;

    // The children, under the Map Run (AWS SDK).
    const listed = await client.send(new ListExecutionsCommand({ mapRunArn }));
    const children = listed.executions!;
    expect(children).toHaveLength(3);
    const mapRunId = mapRunArn.slice(mapRunArn.lastIndexOf(":") + 1);
    expect(children.map((c) => c.executionArn).sort()).toEqual(
      [0, 1, 2].map(
        (i) =>
          `arn:aws:states:us-east-1:123456789012:execution:fan-children/Items:${mapRunId}-${i}`,
      ),
    );
    for (const child of children) {
      expect(child).toMatchObject({
        status: "SUCCEEDED",
        mapRunArn,
        stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:fan-children/Items",
      });
      const described = await client.send(
        new DescribeExecutionCommand({ executionArn: child.executionArn }),
      );
      expect(described.mapRunArn).toBe(mapRunArn);
      const index = Number(child.name!.slice(child.name!.lastIndexOf("-") + 1));
      expect(JSON.parse(described.input!)).toEqual({ n: index + 1 });
      expect(JSON.parse(described.output!)).toEqual({ twice: 2 * (index + 1) });
      const own = await client.send(
        new GetExecutionHistoryCommand({ executionArn: child.executionArn }),
      );
      expect(own.events!.map((e) => [e.id, e.previousEventId, e.type])).toEqual([
        [1, 0, "ExecutionStarted"],
        [2, 0, "PassStateEntered"],
        [3, 2, "PassStateExited"],
        [4, 3, "ExecutionSucceeded"],
      ]);
      expect(JSON.parse(own.events![0]!.executionStartedEventDetails!.input!)).toEqual({
        n: index + 1,
      });
    }

    // The same through REST: the listing by Map Run (ARN or id), a child and its history.
    for (const mapRun of [mapRunArn, mapRunId]) {
      const rest = await stack.client.get(`/v1/executions?mapRun=${encodeURIComponent(mapRun)}`);
      expect(rest.status, rest.text).toBe(200);
      expect(rest.body.items).toHaveLength(3);
    }
    const child = encodeURIComponent(children[0]!.executionArn!);
    const record = await stack.client.get(`/v1/executions/${child}`);
    expect(record.status, record.text).toBe(200);
    expect(record.body).toMatchObject({
      status: "SUCCEEDED",
      stateMachine: "fan-children/Items",
      mapRunArn,
      parentExecution: executionArn,
    });
    const history = await stack.client.get(`/v1/executions/${child}/history`);
    expect(history.status, history.text).toBe(200);
    expect(history.body.items.map((e: { type: string }) => e.type)).toEqual([
      "ExecutionStarted",
      "PassStateEntered",
      "PassStateExited",
      "ExecutionSucceeded",
    ]);

    // Purging the parent erases its children too.
    const purged = await stack.client.call(
      "DELETE",
      `/v1/executions/${encodeURIComponent(executionArn!)}`,
    );
    expect(purged.status, purged.text).toBe(204);
    expect((await stack.client.get(`/v1/executions/${child}`)).status).toBe(404);
    expect((await stack.client.get(`/v1/executions/${child}/history`)).status).toBe(404);
  }, 60_000);
});
