import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  ListMapRunsCommand,
} from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sfn } from "../aws/helpers.js";
import type { Client } from "./client.js";
import { startS3Server, type S3Server } from "./distributed-map-s3.js";
import { startCrashRig, type CrashRig } from "./crash-rig.js";
import { exited } from "./processes.js";
import { startStack, type Stack } from "./stack.js";

/**
 * A Distributed Map whose ItemProcessor is `ExecutionType: EXPRESS` (issue #37) runs
 * its items in the worker, in memory, chunk by chunk, through bin/stepwise.js: the
 * output and the Map Run's counts are what STANDARD children give, no child
 * execution is kept (ListExecutions(mapRunArn) lists none, as on AWS), and a worker
 * SIGKILLed mid-chunk still ends with every item's result exactly once.
 */
const ITEMS = Array.from({ length: 300 }, (_, i) => ({ n: i, bad: i % 40 === 3 }));

function definition(type: "EXPRESS" | "STANDARD") {
  return {
    StartAt: "Fan",
    States: {
      Fan: {
        Type: "Map",
        Label: "Items",
        MaxConcurrency: 60,
        ToleratedFailureCount: 10,
        ItemProcessor: {
          ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: type },
          StartAt: "Check",
          States: {
            Check: {
              Type: "Choice",
              Choices: [{ Variable: "$.bad", BooleanEquals: true, Next: "Bad" }],
              Default: "Double",
            },
            Double: {
              Type: "Pass",
              Parameters: { "n.$": "$.n", "twice.$": "States.MathAdd($.n, $.n)" },
              End: true,
            },
            Bad: { Type: "Fail", Error: "Item.Bad", Cause: "a bad item" },
          },
        },
        End: true,
      },
    },
  };
}

const expected = ITEMS.map((item) => (item.bad ? null : { n: item.n, twice: 2 * item.n }));

describe("Distributed Map: EXPRESS children", () => {
  let stack: Stack;
  let client: SFNClient;
  let s3: S3Server;

  beforeAll(async () => {
    s3 = await startS3Server();
    await s3.createBucket("items");
    await s3.createBucket("results");
    stack = await startStack({ env: s3.env });
    client = sfn(stack);
  }, 60_000);

  afterAll(async () => {
    client?.destroy();
    await stack?.close();
    await s3?.close();
  });

  async function run(type: "EXPRESS" | "STANDARD") {
    const { stateMachineArn } = await client.send(
      new CreateStateMachineCommand({
        name: `fan-${type.toLowerCase()}`,
        definition: JSON.stringify(definition(type)),
        roleArn: "arn:aws:iam::123456789012:role/r",
      }),
    );
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn, input: JSON.stringify(ITEMS) }),
    );
    const described = await stack.client.until(async () => {
      const d = await client.send(new DescribeExecutionCommand({ executionArn }));
      return d.status !== "RUNNING" ? d : undefined;
    }, 60_000);
    expect(described.status, JSON.stringify(described)).toBe("SUCCEEDED");
    const history = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    const types = history.events!.map((e) => e.type);
    const mapRunArn = history.events!.find((e) => e.type === "MapRunStarted")!
      .mapRunStartedEventDetails!.mapRunArn!;
    const mapRun = await client.send(new DescribeMapRunCommand({ mapRunArn }));
    const children = await client.send(new ListExecutionsCommand({ mapRunArn, maxResults: 1000 }));
    return { output: JSON.parse(described.output!), types, mapRun, children: children.executions! };
  }

  it("gives STANDARD's output and Map Run counts, and keeps no child execution", async () => {
    const express = await run("EXPRESS");
    const standard = await run("STANDARD");
    expect(express.output).toEqual(expected);
    expect(express.output).toEqual(standard.output);
    expect(express.types).toEqual(standard.types);
    expect(express.types).not.toContain("MapIterationStarted");
    const counts = { total: 300, succeeded: 292, failed: 8, running: 0, pending: 0 };
    expect(express.mapRun).toMatchObject({ status: "SUCCEEDED", itemCounts: counts });
    expect(express.mapRun.itemCounts).toEqual(standard.mapRun.itemCounts);
    expect(express.mapRun.executionCounts).toEqual(standard.mapRun.executionCounts);
    expect(standard.children).toHaveLength(300);
    expect(express.children).toEqual([]);
  }, 120_000);

  it("honours MaxConcurrency 10,000 (AWS's most): 10,000 items in flight, the rest pending", async () => {
    // 10,250 items from the input (small numbers: 21 KB), each waits 5 s in the worker
    // (time enough for the first sample in a loaded suite: the serving process is busy
    // starting 10,000 items meanwhile).
    const items = Array.from({ length: 10_250 }, (_, i) => i % 10);
    const { stateMachineArn } = await client.send(
      new CreateStateMachineCommand({
        name: "express-10k",
        definition: JSON.stringify({
          StartAt: "Fan",
          States: {
            Fan: {
              Type: "Map",
              MaxConcurrency: 10_000,
              ItemProcessor: {
                ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
                StartAt: "Hold",
                States: { Hold: { Type: "Wait", Seconds: 5, End: true } },
              },
              End: true,
            },
          },
        }),
        roleArn: "arn:aws:iam::123456789012:role/r",
      }),
    );
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn, input: JSON.stringify(items) }),
    );
    // ListMapRuns, not the history: the sampling below must begin while the first
    // items still wait, which a loaded machine's history reads could miss.
    const mapRunArn = await stack.client.until(async () => {
      const { mapRuns } = await client.send(new ListMapRunsCommand({ executionArn }));
      return mapRuns?.[0]?.mapRunArn;
    }, 30_000);
    // The window opens whole (40 chunks of 250 in one step) and stays full until the
    // first chunk's items end; the last chunk starts then, and the window is full again.
    // Never more than 10,000 in flight, and the rest pending until there is room.
    const seen: { running: number; pending: number; succeeded: number }[] = [];
    await stack.client.until(async () => {
      const d = await client.send(new DescribeMapRunCommand({ mapRunArn }));
      const { running = 0, pending = 0, succeeded = 0 } = d.itemCounts!;
      seen.push({ running, pending, succeeded });
      return succeeded === 10_250 || d.status !== "RUNNING" ? d : undefined;
    }, 60_000);
    // When the first sample comes depends on the machine's load; whenever it comes, a
    // window of any size but 10,000 breaks these equalities while over 9,000 items are left.
    expect(seen.length, JSON.stringify(seen)).toBeGreaterThan(0);
    for (const c of seen) {
      expect(c.running + c.pending + c.succeeded).toBe(10_250);
      // The step that takes in a chunk's end starts the next chunk: the window is
      // always full, whenever the sample was taken.
      expect(c.running).toBe(Math.min(10_000, 10_250 - c.succeeded));
      expect(c.pending).toBe(Math.max(0, 250 - c.succeeded));
    }
    const described = await stack.client.until(async () => {
      const d = await client.send(new DescribeExecutionCommand({ executionArn }));
      return d.status !== "RUNNING" ? d : undefined;
    }, 60_000);
    expect(described.status, JSON.stringify(described)).toBe("SUCCEEDED");
    expect(JSON.parse(described.output!)).toEqual(items);
    const done = await client.send(new DescribeMapRunCommand({ mapRunArn }));
    expect(done.itemCounts).toMatchObject({ total: 10_250, succeeded: 10_250, running: 0 });
  }, 60_000);

  it("reads items from S3, batches them (a batch is one child) and writes the result files", async () => {
    const numbers = Array.from({ length: 102 }, (_, i) => i);
    await s3.put("items", "numbers.jsonl", numbers.map((n) => JSON.stringify(n)).join("\n"));
    const created = await stack.client.post("/v1/state-machines", {
      name: "express-batches",
      definition: {
        StartAt: "Process",
        States: {
          Process: {
            Type: "Map",
            MaxConcurrency: 10,
            ItemReader: {
              Resource: "arn:aws:states:::s3:getObject",
              ReaderConfig: { InputType: "JSONL" },
              Parameters: { Bucket: "items", Key: "numbers.jsonl" },
            },
            ItemBatcher: { MaxItemsPerBatch: 4 },
            ItemProcessor: {
              ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
              StartAt: "Unbatch",
              States: { Unbatch: { Type: "Pass", OutputPath: "$.Items", End: true } },
            },
            ResultWriter: {
              Resource: "arn:aws:states:::s3:putObject",
              Parameters: { Bucket: "results", Prefix: "express" },
              WriterConfig: { Transformation: "FLATTEN" },
            },
            End: true,
          },
        },
      },
    });
    expect(created.status, created.text).toBe(201);
    const done = await stack.client.post("/v1/state-machines/express-batches/executions?wait=60", {
      input: {},
    });
    expect(done.body.status, done.text).toBe("SUCCEEDED");
    const arn = done.body.output.MapRunArn as string;
    const id = arn.slice(arn.lastIndexOf(":") + 1);
    expect(await s3.keys("results", `express/${id}/`)).toEqual([
      `express/${id}/SUCCEEDED_0.json`,
      `express/${id}/manifest.json`,
    ]);
    expect(JSON.parse(await s3.get("results", `express/${id}/SUCCEEDED_0.json`))).toEqual(numbers);
    const mapRun = await client.send(new DescribeMapRunCommand({ mapRunArn: arn }));
    // 102 items in batches of 4: 26 children.
    expect(mapRun.itemCounts).toMatchObject({ total: 26, succeeded: 26, failed: 0 });
  }, 60_000);
});

describe("Distributed Map: EXPRESS children and worker crashes", () => {
  let rig: CrashRig;
  let rest: Client;

  beforeAll(async () => {
    rig = await startCrashRig("distributed-map-express");
    rest = rig.client;
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  it("ends with every item's result exactly once after a worker dies mid-chunk", async () => {
    const created = await rest.post("/v1/state-machines", {
      name: "express-crashy",
      definition: definition("EXPRESS"),
    });
    expect(created.status, created.text).toBe(201);
    const started = await rest.post("/v1/state-machines/express-crashy/executions", {
      input: ITEMS,
    });
    expect(started.status).toBe(201);
    const id = encodeURIComponent(started.body.executionId);

    // The first worker dies in its third chunk call: two chunks' results are committed.
    const first = rig.worker({ at: "duringTask", after: 3 });
    await exited(first.child, 60_000);
    expect(first.child.signalCode).toBe("SIGKILL");
    const second = rig.worker();
    try {
      const done = await rest.until(async () => {
        const record = await rest.get(`/v1/executions/${id}`);
        return record.body.status !== "RUNNING" ? record.body : undefined;
      }, 60_000);
      expect(done.status, JSON.stringify(done)).toBe("SUCCEEDED");
      expect(done.output).toEqual(expected);
      const children = await rest.get(`/v1/executions?stateMachine=express-crashy&limit=1000`);
      expect(children.body.items).toHaveLength(1);
    } finally {
      second.child.kill("SIGTERM");
      await exited(second.child, 30_000);
    }
  }, 180_000);
});
