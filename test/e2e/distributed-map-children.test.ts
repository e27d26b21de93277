import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  DescribeStateMachineForExecutionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  RedriveExecutionCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
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
        // One item each (no ItemBatcher), as AWS counts them.
        itemCount: 1,
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

    // The state machine a child ran: its parent's, with the Map Run and its label (AWS).
    const ran = await client.send(
      new DescribeStateMachineForExecutionCommand({ executionArn: children[0]!.executionArn }),
    );
    expect(ran).toMatchObject({
      stateMachineArn,
      name: "fan-children",
      mapRunArn,
      label: "Items",
    });
    expect(JSON.parse(ran.definition!)).toEqual(DEFINITION);
    // The parent's own answer names no Map Run.
    const own = await client.send(new DescribeStateMachineForExecutionCommand({ executionArn }));
    expect(own.stateMachineArn).toBe(stateMachineArn);
    expect(own.mapRunArn).toBeUndefined();
    expect(own.label).toBeUndefined();

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

  it("StopExecution of a child aborts it alone; its Map Run counts it as a failure", async () => {
    // Item 0 waits; the others end at once. One failure is tolerated.
    const { executionArn, mapRunArn } = await startFan("fan-stop-child", lingeringFan("Slow", 1));
    const mapRunId = mapRunArn.slice(mapRunArn.lastIndexOf(":") + 1);
    const slow = `arn:aws:states:us-east-1:123456789012:execution:fan-stop-child/Slow:${mapRunId}-0`;
    await until(async () => {
      const listed = await client.send(new ListExecutionsCommand({ mapRunArn }));
      const running = listed.executions!.filter((e) => e.status === "RUNNING");
      const done = listed.executions!.filter((e) => e.status === "SUCCEEDED");
      return running.length === 1 && done.length === 2 ? true : undefined;
    });

    const stopped = await client.send(
      new StopExecutionCommand({ executionArn: slow, error: "Ops.Stop", cause: "not needed" }),
    );
    expect(stopped.stopDate).toBeInstanceOf(Date);
    const child = await client.send(new DescribeExecutionCommand({ executionArn: slow }));
    expect(child).toMatchObject({ status: "ABORTED", error: "Ops.Stop", cause: "not needed" });
    const own = await client.send(new GetExecutionHistoryCommand({ executionArn: slow }));
    expect(own.events!.at(-1)).toMatchObject({
      type: "ExecutionAborted",
      executionAbortedEventDetails: { error: "Ops.Stop", cause: "not needed" },
    });

    // The parent goes on: the aborted child is one tolerated failure.
    await ended(client, executionArn!);
    const parent = await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(parent.status).toBe("SUCCEEDED");
    const run = await client.send(new DescribeMapRunCommand({ mapRunArn }));
    expect(run.status).toBe("SUCCEEDED");
    expect(run.executionCounts).toMatchObject({ total: 3, succeeded: 2, aborted: 1 });
    // A second stop of the ended child changes nothing, as AWS answers it.
    const again = await client.send(new StopExecutionCommand({ executionArn: slow }));
    expect(again.stopDate).toBeInstanceOf(Date);
  }, 60_000);
});

describe("Distributed Map: redrive", () => {
  it("ListExecutions by Map Run gives each child's own redriveCount", async () => {
    // Item 0 waits and is stopped: the Map (no tolerance) fails, and so does its parent.
    const { executionArn, mapRunArn } = await startFan("fan-redrive", lingeringFan("Again"));
    const listed = async () => {
      const { executions } = await client.send(new ListExecutionsCommand({ mapRunArn }));
      return executions!.sort((a, b) => a.name!.localeCompare(b.name!));
    };
    await until(async () => {
      const children = await listed();
      return children.filter((e) => e.status === "SUCCEEDED").length === 2 &&
        children[0]?.status === "RUNNING"
        ? true
        : undefined;
    });
    const lingering = (await listed())[0]!;
    await client.send(new StopExecutionCommand({ executionArn: lingering.executionArn }));
    await ended(client, executionArn!);
    expect((await client.send(new DescribeExecutionCommand({ executionArn }))).status).toBe(
      "FAILED",
    );
    expect((await listed()).map((e) => [e.status, e.redriveCount])).toEqual([
      ["ABORTED", 0],
      ["SUCCEEDED", 0],
      ["SUCCEEDED", 0],
    ]);

    // The redrive runs the aborted child again (it waits anew); the others stay as they were.
    await client.send(new RedriveExecutionCommand({ executionArn }));
    const children = await until(async () => {
      const now = await listed();
      return now[0]?.status === "RUNNING" ? now : undefined;
    });
    expect(children.map((e) => [e.name, e.status, e.redriveCount])).toEqual([
      [lingering.name, "RUNNING", 1],
      [children[1]!.name, "SUCCEEDED", 0],
      [children[2]!.name, "SUCCEEDED", 0],
    ]);
    expect(children[0]!.redriveDate).toBeInstanceOf(Date);
    expect(children[1]!.redriveDate).toBeUndefined();
    const own = await client.send(
      new DescribeExecutionCommand({ executionArn: lingering.executionArn }),
    );
    expect(own.redriveCount).toBe(1);
    await client.send(new StopExecutionCommand({ executionArn }));
  }, 60_000);
});

describe("Distributed Map: batches", () => {
  it("ListExecutions by Map Run counts each child's items (itemCount: its batch's size)", async () => {
    const definition = {
      StartAt: "Fan",
      States: {
        Fan: {
          Type: "Map",
          ItemBatcher: { MaxItemsPerBatch: 2 },
          ItemProcessor: {
            ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
            StartAt: "Count",
            States: { Count: { Type: "Pass", End: true } },
          },
          End: true,
        },
      },
    };
    const { stateMachineArn } = await client.send(
      new CreateStateMachineCommand({
        name: "fan-batches",
        definition: JSON.stringify(definition),
        roleArn: "arn:aws:iam::123456789012:role/r",
      }),
    );
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn, input: JSON.stringify([1, 2, 3, 4, 5]) }),
    );
    await ended(client, executionArn!);
    const history = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    const mapRunArn = history.events!.find((e) => e.type === "MapRunStarted")!
      .mapRunStartedEventDetails!.mapRunArn!;
    const listed = await client.send(new ListExecutionsCommand({ mapRunArn }));
    const counts = listed
      .executions!.map((e) => [Number(e.name!.slice(e.name!.lastIndexOf("-") + 1)), e.itemCount])
      .sort((a, b) => a[0]! - b[0]!);
    expect(counts).toEqual([
      [0, 2],
      [1, 2],
      [2, 1],
    ]);
    // Listed by state machine, executions carry no itemCount (AWS: by Map Run only).
    const byMachine = await client.send(new ListExecutionsCommand({ stateMachineArn }));
    expect(byMachine.executions![0]!.itemCount).toBeUndefined();
  }, 60_000);
});

async function until<T>(look: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const seen = await look();
    if (seen !== undefined) return seen;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the condition never held");
}

/** A Distributed Map over its input whose item 0 waits ten minutes; the others end at once. */
function lingeringFan(label: string, toleratedFailureCount?: number): object {
  return {
    StartAt: "Fan",
    States: {
      Fan: {
        Type: "Map",
        Label: label,
        ...(toleratedFailureCount !== undefined
          ? { ToleratedFailureCount: toleratedFailureCount }
          : {}),
        ItemSelector: { "n.$": "$$.Map.Item.Value" },
        ItemProcessor: {
          ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
          StartAt: "Which",
          States: {
            Which: {
              Type: "Choice",
              Choices: [{ Variable: "$.n", NumericEquals: 0, Next: "Linger" }],
              Default: "Done",
            },
            Linger: { Type: "Wait", Seconds: 600, End: true },
            Done: { Type: "Pass", End: true },
          },
        },
        End: true,
      },
    },
  };
}

/** Creates `name` with `definition` and starts it on [0, 1, 2]: the execution and its Map Run. */
async function startFan(
  name: string,
  definition: object,
): Promise<{ executionArn: string; mapRunArn: string }> {
  const { stateMachineArn } = await client.send(
    new CreateStateMachineCommand({
      name,
      definition: JSON.stringify(definition),
      roleArn: "arn:aws:iam::123456789012:role/r",
    }),
  );
  const { executionArn } = await client.send(
    new StartExecutionCommand({ stateMachineArn, input: JSON.stringify([0, 1, 2]) }),
  );
  const mapRunArn = await until(async () => {
    const h = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    return h.events!.find((e) => e.type === "MapRunStarted")?.mapRunStartedEventDetails!.mapRunArn;
  });
  return { executionArn: executionArn!, mapRunArn };
}
