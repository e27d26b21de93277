import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  RedriveExecutionCommand,
  SFNClient,
  StartExecutionCommand,
  type HistoryEvent,
} from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sfn } from "../aws/helpers.js";
import { startCrashRig, type CrashRig } from "./crash-rig.js";
import { startS3Server, type S3Server } from "./distributed-map-s3.js";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { exited } from "./processes.js";
import { startStack, type Stack } from "./stack.js";

/**
 * Redriving a Distributed Map whose ItemProcessor is `ExecutionType: EXPRESS`, through
 * bin/stepwise.js with the AWS SDK (issue #37). AWS: "When you redrive a Map Run, the
 * Express child workflows are rerun using the StartExecution API action": the items
 * that did not succeed (failed, or never started because the Map Run failed first)
 * run again as Express children — here in chunks in the worker, as the first run's
 * did — never as iterations of the parent, and the items that succeeded keep their
 * outputs. The items come from s3rver (ItemReader, JSON Lines) and the results go
 * back to it (ResultWriter), all 600 in order after the redrive.
 */
let stack: Stack;
let client: SFNClient;
let s3: S3Server;
let service: FakeServer;
/** Items whose first call fails (the Map Run fails past its tolerance). */
const failOnce = new Set([5, 6, 7, 1003]);

const ITEMS = Array.from({ length: 600 }, (_, i) => ({ n: i }));

beforeAll(async () => {
  service = await startFakeServer((request) => {
    const n = (request.body as { n: number }).n;
    if (failOnce.delete(n)) return { status: 500, body: { message: `not ${n} yet` } };
    // Slow enough that the first chunk's failures end the Map Run before later chunks.
    return { body: { n, done: true }, delayMs: 20 };
  });
  s3 = await startS3Server();
  await s3.createBucket("items");
  await s3.createBucket("results");
  await s3.put("items", "numbers.jsonl", ITEMS.map((item) => JSON.stringify(item)).join("\n"));
  stack = await startStack({ env: s3.env, egressAllow: "127.0.0.1" });
  client = sfn(stack);
}, 60_000);

afterAll(async () => {
  client?.destroy();
  await stack?.close();
  await s3?.close();
  await service?.close();
});

function definition() {
  return {
    StartAt: "Fan",
    States: {
      Fan: {
        Type: "Map",
        Label: "Items",
        MaxConcurrency: 100,
        ToleratedFailureCount: 2,
        ItemReader: {
          Resource: "arn:aws:states:::s3:getObject",
          ReaderConfig: { InputType: "JSONL" },
          Parameters: { Bucket: "items", Key: "numbers.jsonl" },
        },
        ItemProcessor: {
          ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
          StartAt: "Work",
          States: {
            Work: {
              Type: "Task",
              Resource: "arn:aws:states:::http:invoke",
              Parameters: {
                ApiEndpoint: `${service.url}/work`,
                Method: "POST",
                RequestBody: { "n.$": "$.n" },
              },
              ResultSelector: { "n.$": "$.ResponseBody.n" },
              Next: "Name",
            },
            // The item's own Express execution: named after its Map Run and index.
            Name: {
              Type: "Pass",
              Parameters: { "n.$": "$.n", "name.$": "$$.Execution.Name" },
              End: true,
            },
          },
        },
        ResultWriter: {
          Resource: "arn:aws:states:::s3:putObject",
          Parameters: { Bucket: "results", Prefix: "redriven" },
          WriterConfig: { Transformation: "COMPACT", OutputType: "JSON" },
        },
        End: true,
      },
    },
  };
}

const callsOf = (n: number) =>
  service.requests.filter((r) => (r.body as { n?: unknown } | undefined)?.n === n).length;

async function ended(executionArn: string) {
  return stack.client.until(async () => {
    const d = await client.send(new DescribeExecutionCommand({ executionArn }));
    return d.status !== "RUNNING" ? d : undefined;
  }, 60_000);
}

async function historyOf(executionArn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.send(
      new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken }),
    );
    events.push(...page.events!);
    nextToken = page.nextToken;
  } while (nextToken);
  return events;
}

describe("redrive of a Distributed Map with EXPRESS children", () => {
  it("runs the failed and never-started items again as Express children, not iterations", async () => {
    const { stateMachineArn } = await client.send(
      new CreateStateMachineCommand({
        name: "express-redrive",
        definition: JSON.stringify(definition()),
        roleArn: "arn:aws:iam::123456789012:role/r",
      }),
    );
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn, input: "{}" }),
    );
    const failed = await ended(executionArn!);
    expect(failed.status).toBe("FAILED");
    expect(failed.error).toBe("States.ExceedToleratedFailureThreshold");
    const firstEvents = await historyOf(executionArn!);
    const mapRunArn = firstEvents.find((e) => e.type === "MapRunStarted")!
      .mapRunStartedEventDetails!.mapRunArn!;
    const mapRunId = mapRunArn.slice(mapRunArn.lastIndexOf(":") + 1);
    // The first chunk (items 0-99) took the Map Run past its tolerance: the rest never ran.
    expect(ITEMS.map((item) => callsOf(item.n) > 0)).toEqual(ITEMS.map((item) => item.n < 100));
    const before = await client.send(new DescribeMapRunCommand({ mapRunArn }));
    expect(before).toMatchObject({ status: "FAILED", redriveCount: 0 });
    expect(before.itemCounts).toMatchObject({ total: 600, succeeded: 97, failed: 3 });

    await client.send(new RedriveExecutionCommand({ executionArn }));
    const done = await ended(executionArn!);
    expect(done.status, JSON.stringify(done)).toBe("SUCCEEDED");
    expect(done.redriveCount).toBe(1);

    // Every item that had not succeeded ran once more; the ones that had, never again.
    for (const { n } of ITEMS) {
      const expected = n >= 5 && n <= 7 ? 2 : 1;
      expect(callsOf(n), `item ${n}`).toBe(expected);
    }

    // The parent: the Map Run redriven and ended, no iteration of its own.
    const events = await historyOf(executionArn!);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.slice(firstEvents.length).map((e) => e.type)).toEqual([
      "ExecutionRedriven",
      "MapStateEntered",
      "MapStateStarted",
      "MapRunRedriven",
      "MapRunSucceeded",
      "MapStateSucceeded",
      "MapStateExited",
      "ExecutionSucceeded",
    ]);
    expect(events.filter((e) => String(e.type).startsWith("MapIteration"))).toEqual([]);
    const after = await client.send(new DescribeMapRunCommand({ mapRunArn }));
    expect(after).toMatchObject({ status: "SUCCEEDED", redriveCount: 1 });
    expect(after.itemCounts).toMatchObject({
      total: 600,
      succeeded: 600,
      failed: 0,
      running: 0,
      pending: 0,
    });
    // Express children keep no execution of their own, redriven or not (as on AWS).
    const listed = await client.send(new ListExecutionsCommand({ mapRunArn }));
    expect(listed.executions).toEqual([]);

    // The results, in item order, each item run as its own index's Express execution.
    const output = JSON.parse(done.output!);
    expect(output.MapRunArn).toBe(mapRunArn);
    const manifest = JSON.parse(await s3.get("results", output.ResultWriterDetails.Key));
    const file = manifest.ResultFiles.SUCCEEDED[0].Key as string;
    expect(file).toBe(`redriven/${mapRunId}/SUCCEEDED_0.json`);
    expect(manifest.ResultFiles.FAILED).toEqual([]);
    expect(JSON.parse(await s3.get("results", file))).toEqual(
      ITEMS.map(({ n }) => ({ n, name: `${mapRunId}-${n}` })),
    );
  }, 120_000);
});

describe("redrive of a Distributed Map with EXPRESS children, and a worker that dies", () => {
  let rig: CrashRig;

  beforeAll(async () => {
    rig = await startCrashRig("redrive-map-express", { STEPWISE_EGRESS_ALLOW: "127.0.0.1" });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  it("runs a redriven chunk again whole after its worker dies, each result once", async () => {
    // Items 1000-1299, 50 at once: item 1003 fails the first chunk (nothing tolerated),
    // so 1050-1299 never start. The redrive's chunks hold item 1003 with 1050-1098,
    // then 1099-1148, …; the worker that takes them dies in its second chunk call.
    const items = Array.from({ length: 300 }, (_, i) => ({ n: 1000 + i }));
    const machine = definition() as { States: { Fan: Record<string, unknown> } };
    delete machine.States.Fan.ItemReader;
    delete machine.States.Fan.ResultWriter;
    machine.States.Fan.MaxConcurrency = 50;
    machine.States.Fan.ToleratedFailureCount = 0;
    const created = await rig.client.post("/v1/state-machines", {
      name: "express-redrive-crash",
      definition: machine,
    });
    expect(created.status, created.text).toBe(201);
    const started = await rig.client.post("/v1/state-machines/express-redrive-crash/executions", {
      input: items,
    });
    const id = encodeURIComponent(started.body.executionId as string);
    const status = (wanted: string) =>
      rig.client.until(async () => {
        const record = (await rig.client.get(`/v1/executions/${id}`)).body;
        return record.status === wanted ? record : undefined;
      }, 60_000);

    const steady = rig.worker();
    try {
      await status("FAILED");
    } finally {
      steady.child.kill("SIGTERM");
      await exited(steady.child, 30_000);
    }
    expect(items.map(({ n }) => callsOf(n) > 0)).toEqual(items.map(({ n }) => n < 1050));

    const redriven = await rig.client.post(`/v1/executions/${id}/redrive`, {});
    expect(redriven.status, redriven.text).toBe(200);
    const crashing = rig.worker({ at: "duringTask", after: 2 });
    await exited(crashing.child, 60_000);
    expect(crashing.child.signalCode).toBe("SIGKILL");
    const last = rig.worker();
    try {
      const done = await status("SUCCEEDED");
      const history = (await rig.client.get(`/v1/executions/${id}/history?limit=1000`)).body
        .items as { type: string; mapRunStartedEventDetails?: { mapRunArn: string } }[];
      const mapRunArn = history.find((e) => e.type === "MapRunStarted")!.mapRunStartedEventDetails!
        .mapRunArn;
      const mapRunId = mapRunArn.slice(mapRunArn.lastIndexOf(":") + 1);
      // Every item's result once, in order, each as its own index's Express execution.
      expect(done.output).toEqual(items.map(({ n }, i) => ({ n, name: `${mapRunId}-${i}` })));
      expect(history.filter((e) => e.type.startsWith("MapIteration"))).toEqual([]);
      expect(history.filter((e) => e.type === "MapRunRedriven")).toHaveLength(1);
      // At least once: every item that had not succeeded was called again.
      for (const { n } of items) {
        if (n === 1003 || n >= 1050) expect(callsOf(n), `item ${n}`).toBeGreaterThanOrEqual(1);
      }
      expect(callsOf(1003)).toBeGreaterThanOrEqual(2);
    } finally {
      last.child.kill("SIGTERM");
      await exited(last.child, 30_000);
    }
  }, 180_000);
});
