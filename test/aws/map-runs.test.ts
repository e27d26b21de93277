import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  ListMapRunsCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
  UpdateMapRunCommand,
} from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startS3Server, type S3Server } from "../e2e/distributed-map-s3.js";
import { startStack, type Stack } from "../e2e/stack.js";
import { ended, failure, sfn } from "./helpers.js";

/**
 * Map Runs through @aws-sdk/client-sfn against the service's AWS endpoint:
 * ListMapRuns, DescribeMapRun (counts, tolerance, concurrency, status) and
 * UpdateMapRun of a running Map Run, items read from a real S3-protocol server.
 */
let stack: Stack;
let client: SFNClient;
let s3: S3Server;

beforeAll(async () => {
  s3 = await startS3Server();
  await s3.createBucket("items");
  stack = await startStack({ env: s3.env });
  client = sfn(stack);
}, 60_000);

afterAll(async () => {
  client?.destroy();
  await stack?.close();
  await s3?.close();
});

const jsonl = (items: unknown[]) => items.map((item) => JSON.stringify(item)).join("\n") + "\n";

function definition(map: Record<string, unknown>, processor: Record<string, unknown>): string {
  return JSON.stringify({
    StartAt: "Process",
    States: {
      Process: {
        Type: "Map",
        Label: "Items",
        ItemReader: {
          Resource: "arn:aws:states:::s3:getObject",
          ReaderConfig: { InputType: "JSONL" },
          Parameters: { Bucket: "items", "Key.$": "$.key" },
        },
        ItemProcessor: {
          ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
          ...processor,
        },
        End: true,
        ...map,
      },
    },
  });
}

async function machine(name: string, text: string): Promise<string> {
  const created = await client.send(
    new CreateStateMachineCommand({
      name,
      definition: text,
      roleArn: "arn:aws:iam::123456789012:role/r",
    }),
  );
  return created.stateMachineArn!;
}

/** Polls `check` until it answers (no fixed sleeps: the test moves as soon as the service has). */
async function until<T>(check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function mapRunOf(executionArn: string): Promise<string> {
  return until(async () => {
    const { mapRuns } = await client.send(new ListMapRunsCommand({ executionArn }));
    return mapRuns?.[0]?.mapRunArn;
  });
}

const waitItem = {
  StartAt: "Sleep",
  States: { Sleep: { Type: "Wait", SecondsPath: "$.wait", End: true } },
};

describe("Map Runs through the AWS SDK", () => {
  it("lists and describes a Map Run, and UpdateMapRun widens a running one", async () => {
    await s3.put(
      "items",
      "slow.jsonl",
      jsonl(Array.from({ length: 8 }, (_, i) => ({ id: i, wait: 2 }))),
    );
    const arn = await machine("widen", definition({ MaxConcurrency: 1 }, waitItem));
    const { executionArn } = await client.send(
      new StartExecutionCommand({
        stateMachineArn: arn,
        input: JSON.stringify({ key: "slow.jsonl" }),
      }),
    );
    const mapRunArn = await mapRunOf(executionArn!);
    expect(mapRunArn).toMatch(
      /^arn:aws:states:us-east-1:123456789012:mapRun:widen\/Items:[0-9a-f-]{36}$/,
    );
    const running = await until(async () => {
      const d = await client.send(new DescribeMapRunCommand({ mapRunArn }));
      return d.itemCounts?.running === 1 ? d : undefined;
    });
    expect(running).toMatchObject({
      mapRunArn,
      executionArn,
      status: "RUNNING",
      maxConcurrency: 1,
      toleratedFailureCount: 0,
      toleratedFailurePercentage: 0,
      itemCounts: { total: 8, running: 1, succeeded: 0, failed: 0 },
    });
    expect(running.itemCounts!.pending).toBe(7);
    expect(running.startDate).toBeInstanceOf(Date);

    await client.send(
      new UpdateMapRunCommand({ mapRunArn, maxConcurrency: 8, toleratedFailureCount: 2 }),
    );
    const widened = await until(async () => {
      const d = await client.send(new DescribeMapRunCommand({ mapRunArn }));
      return d.itemCounts!.running! > 1 || d.status !== "RUNNING" ? d : undefined;
    });
    expect(widened.maxConcurrency).toBe(8);
    expect(widened.toleratedFailureCount).toBe(2);

    await ended(client, executionArn!).catch(async () => {
      await until(async () => {
        const d = await client.send(new DescribeExecutionCommand({ executionArn }));
        return d.status !== "RUNNING" ? d : undefined;
      });
    });
    const done = await until(async () => {
      const d = await client.send(new DescribeMapRunCommand({ mapRunArn }));
      return d.status !== "RUNNING" ? d : undefined;
    });
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      itemCounts: { total: 8, succeeded: 8, failed: 0, running: 0, pending: 0, aborted: 0 },
      executionCounts: { total: 8, succeeded: 8 },
    });
    expect(done.stopDate).toBeInstanceOf(Date);

    const listed = await client.send(new ListMapRunsCommand({ executionArn }));
    expect(listed.mapRuns).toEqual([
      {
        executionArn,
        mapRunArn,
        stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:widen/Items",
        startDate: expect.any(Date),
        stopDate: expect.any(Date),
      },
    ]);
    // Each item ran as a child execution of the Map Run, listed under it, as on AWS.
    const children = await client.send(new ListExecutionsCommand({ mapRunArn }));
    expect(children.executions).toHaveLength(8);
    for (const child of children.executions!) {
      expect(child).toMatchObject({
        stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:widen/Items",
        status: "SUCCEEDED",
        mapRunArn,
      });
      expect(child.executionArn).toMatch(
        /^arn:aws:states:us-east-1:123456789012:execution:widen\/Items:[0-9a-f-]{36}-\d$/,
      );
    }
    const first = children.executions![0]!;
    const described = await client.send(
      new DescribeExecutionCommand({ executionArn: first.executionArn }),
    );
    expect(described).toMatchObject({ mapRunArn, status: "SUCCEEDED", name: first.name });
    const own = await client.send(
      new GetExecutionHistoryCommand({ executionArn: first.executionArn }),
    );
    expect(own.events!.map((e) => e.type)).toEqual([
      "ExecutionStarted",
      "WaitStateEntered",
      "WaitStateExited",
      "ExecutionSucceeded",
    ]);
    const { events } = await client.send(
      new GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }),
    );
    const started = events!.find((e) => e.type === "MapRunStarted");
    expect(started?.mapRunStartedEventDetails?.mapRunArn).toBe(mapRunArn);
    expect(events!.some((e) => e.type === "MapRunSucceeded")).toBe(true);
    expect(events!.filter((e) => e.type!.startsWith("MapIteration"))).toEqual([]);

    expect(
      await failure(client.send(new UpdateMapRunCommand({ mapRunArn, maxConcurrency: 2 }))),
    ).toMatchObject({ name: "ValidationException" });
  }, 90_000);

  it("counts tolerated failures, and a stop aborts the Map Run", async () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ id: i, fail: i % 4 === 1 }));
    await s3.put("items", "some-fail.jsonl", jsonl(items));
    const arn = await machine(
      "tolerant",
      definition(
        { ToleratedFailurePercentage: 50 },
        {
          StartAt: "Check",
          States: {
            Check: {
              Type: "Choice",
              Choices: [{ Variable: "$.fail", BooleanEquals: true, Next: "Broken" }],
              Default: "Fine",
            },
            Broken: { Type: "Fail", Error: "Item.Broken" },
            Fine: { Type: "Pass", End: true },
          },
        },
      ),
    );
    const { executionArn } = await client.send(
      new StartExecutionCommand({
        stateMachineArn: arn,
        input: JSON.stringify({ key: "some-fail.jsonl" }),
      }),
    );
    await ended(client, executionArn!);
    const { status } = await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(status).toBe("SUCCEEDED");
    const mapRunArn = await mapRunOf(executionArn!);
    const d = await client.send(new DescribeMapRunCommand({ mapRunArn }));
    expect(d).toMatchObject({
      status: "SUCCEEDED",
      toleratedFailurePercentage: 50,
      itemCounts: { total: 10, succeeded: 7, failed: 3 },
    });

    // The first item ends at once and the window refills: the counters of a running Map
    // Run come from its run's state (the record has them only from its milestones).
    await s3.put(
      "items",
      "long.jsonl",
      jsonl([{ wait: 0 }, { wait: 300 }, { wait: 300 }, { wait: 300 }]),
    );
    const slow = await machine("stopped", definition({ MaxConcurrency: 2 }, waitItem));
    const run = await client.send(
      new StartExecutionCommand({
        stateMachineArn: slow,
        input: JSON.stringify({ key: "long.jsonl" }),
      }),
    );
    const stoppedRun = await mapRunOf(run.executionArn!);
    const refilled = await until(async () => {
      const r = await client.send(new DescribeMapRunCommand({ mapRunArn: stoppedRun }));
      return r.itemCounts?.succeeded === 1 && r.itemCounts.running === 2 ? r : undefined;
    });
    expect(refilled.itemCounts).toMatchObject({ total: 4, pending: 1, failed: 0, aborted: 0 });
    // The pending item has no child execution yet, as on AWS (the window starts it).
    const pendingChild = `arn:aws:states:us-east-1:123456789012:execution:stopped/Items:${stoppedRun.slice(stoppedRun.lastIndexOf(":") + 1)}-3`;
    expect(
      await failure(client.send(new StopExecutionCommand({ executionArn: pendingChild }))),
    ).toMatchObject({ name: "ExecutionDoesNotExist" });
    expect(
      await failure(client.send(new DescribeExecutionCommand({ executionArn: pendingChild }))),
    ).toMatchObject({ name: "ExecutionDoesNotExist" });
    await client.send(new StopExecutionCommand({ executionArn: run.executionArn }));
    const aborted = await until(async () => {
      const r = await client.send(new DescribeMapRunCommand({ mapRunArn: stoppedRun }));
      return r.status !== "RUNNING" ? r : undefined;
    });
    expect(aborted).toMatchObject({
      status: "ABORTED",
      itemCounts: { total: 4, succeeded: 1, aborted: 3, running: 0, pending: 0 },
    });
  }, 90_000);

  it("answers ResourceNotFound and InvalidArn as AWS does", async () => {
    const unknown =
      "arn:aws:states:us-east-1:123456789012:mapRun:m/Label:00000000-0000-4000-8000-000000000000";
    expect(
      await failure(client.send(new DescribeMapRunCommand({ mapRunArn: unknown }))),
    ).toMatchObject({
      name: "ResourceNotFound",
    });
    expect(
      await failure(client.send(new DescribeMapRunCommand({ mapRunArn: "arn:aws:states:::nope" }))),
    ).toMatchObject({ name: "InvalidArn" });
    expect(
      await failure(
        client.send(new UpdateMapRunCommand({ mapRunArn: unknown, maxConcurrency: 1 })),
      ),
    ).toMatchObject({ name: "ResourceNotFound" });
  });
});
