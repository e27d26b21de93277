import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startS3Server, type S3Server } from "./distributed-map-s3.js";
import { startStack, type Stack } from "./stack.js";

/**
 * A Distributed Map end to end through bin/stepwise.js, against a real
 * S3-protocol server (s3rver) on a loopback port: items read from JSONL, CSV and
 * a listing, batched, written back with ResultWriter (FLATTEN and NONE), with
 * tolerated failures, the Map Run's events in the parent's history, and the
 * ItemReader's failures named with the object and line.
 */
let stack: Stack;
let s3: S3Server;

const DISTRIBUTED = { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" };

function machine(map: Record<string, unknown>, processor: Record<string, unknown>) {
  return {
    StartAt: "Process",
    States: {
      Process: {
        Type: "Map",
        ItemProcessor: { ProcessorConfig: DISTRIBUTED, ...processor },
        End: true,
        ...map,
      },
    },
  };
}

const identity = { StartAt: "Keep", States: { Keep: { Type: "Pass", End: true } } };

async function create(name: string, definition: unknown): Promise<void> {
  const reply = await stack.client.post("/v1/state-machines", { name, definition });
  expect(reply.status, reply.text).toBe(201);
}

async function run(name: string, input: unknown, wait = 60) {
  const reply = await stack.client.post(`/v1/state-machines/${name}/executions?wait=${wait}`, {
    input,
  });
  expect(reply.status, reply.text).toBeLessThan(300);
  return reply.body as {
    executionId: string;
    status: string;
    output?: any;
    error?: string;
    cause?: string;
  };
}

async function historyTypes(executionId: string): Promise<{ type: string; [k: string]: any }[]> {
  const reply = await stack.client.get(
    `/v1/executions/${encodeURIComponent(executionId)}/history?limit=1000`,
  );
  return reply.body.items;
}

const jsonl = (items: unknown[]) => items.map((item) => JSON.stringify(item)).join("\n") + "\n";

beforeAll(async () => {
  s3 = await startS3Server();
  for (const bucket of ["items", "results", "listing"]) await s3.createBucket(bucket);
  stack = await startStack({ env: s3.env, expectErrors: /task attempt failed|ItemReader/ });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await s3?.close();
});

describe("Distributed Map: ItemReader", () => {
  it("reads JSONL items line by line and writes FLATTEN results to S3", async () => {
    const items = Array.from({ length: 150 }, (_, i) => ({ id: i, n: i + 1 }));
    await s3.put("items", "numbers.jsonl", jsonl(items));
    await create(
      "jsonl-flatten",
      machine(
        {
          Label: "Doubler",
          MaxConcurrency: 20,
          ItemReader: {
            Resource: "arn:aws:states:::s3:getObject",
            ReaderConfig: { InputType: "JSONL" },
            Parameters: { "Bucket.$": "$.bucket", "Key.$": "$.key" },
          },
          ResultWriter: {
            Resource: "arn:aws:states:::s3:putObject",
            Parameters: { Bucket: "results", Prefix: "flat" },
            WriterConfig: { Transformation: "FLATTEN", OutputType: "JSON" },
          },
        },
        {
          StartAt: "Double",
          States: {
            Double: {
              Type: "Pass",
              Parameters: { "pair.$": "States.Array($.n, States.MathAdd($.n, $.n))" },
              OutputPath: "$.pair",
              End: true,
            },
          },
        },
      ),
    );
    const done = await run("jsonl-flatten", { bucket: "items", key: "numbers.jsonl" });
    expect(done.status, JSON.stringify(done)).toBe("SUCCEEDED");
    const arn = done.output.MapRunArn as string;
    expect(arn).toMatch(
      /^arn:aws:states:us-east-1:123456789012:mapRun:jsonl-flatten\/Doubler:[0-9a-f-]{36}$/,
    );
    const id = arn.slice(arn.lastIndexOf(":") + 1);
    expect(done.output.ResultWriterDetails).toEqual({
      Bucket: "results",
      Key: `flat/${id}/manifest.json`,
    });
    expect(await s3.keys("results", `flat/${id}/`)).toEqual([
      `flat/${id}/SUCCEEDED_0.json`,
      `flat/${id}/manifest.json`,
    ]);
    const succeeded = JSON.parse(await s3.get("results", `flat/${id}/SUCCEEDED_0.json`));
    expect(succeeded).toEqual(items.flatMap((item) => [item.n, item.n * 2]));
    const manifest = JSON.parse(await s3.get("results", `flat/${id}/manifest.json`));
    expect(manifest).toEqual({
      DestinationBucket: "results",
      MapRunArn: arn,
      ResultFiles: {
        FAILED: [],
        PENDING: [],
        SUCCEEDED: [
          {
            Key: `flat/${id}/SUCCEEDED_0.json`,
            Size: Buffer.byteLength(JSON.stringify(succeeded)),
          },
        ],
      },
    });
    const history = await historyTypes(done.executionId);
    const types = history.map((event) => event.type);
    const started = history.find((event) => event.type === "MapRunStarted")!;
    expect(JSON.stringify(started)).toContain(arn);
    expect(types.indexOf("MapStateStarted")).toBeLessThan(types.indexOf("MapRunStarted"));
    expect(types.indexOf("MapRunSucceeded")).toBeLessThan(types.indexOf("MapStateSucceeded"));
    // Each item ran as a child execution of the Map Run, with a history of its own:
    // the parent's holds no iteration.
    expect(types.filter((t) => t.startsWith("MapIteration"))).toEqual([]);
    const children = await stack.client.get(
      `/v1/executions?mapRun=${encodeURIComponent(arn)}&limit=1000`,
    );
    expect(children.status, children.text).toBe(200);
    expect(children.body.items).toHaveLength(150);
    expect(new Set(children.body.items.map((e: { status: string }) => e.status))).toEqual(
      new Set(["SUCCEEDED"]),
    );
  }, 90_000);

  it("reads CSV with quotes and a delimiter, values as strings; GIVEN headers and MaxItems", async () => {
    await s3.put(
      "items",
      "people.csv",
      'id;name;note\r\n1;"Smith; John";"said ""hi"""\r\n2;Jane;"two\nlines"\r\n3;;\r\n',
    );
    await create(
      "csv-first-row",
      machine(
        {
          ItemReader: {
            Resource: "arn:aws:states:::s3:getObject",
            ReaderConfig: {
              InputType: "CSV",
              CSVHeaderLocation: "FIRST_ROW",
              CSVDelimiter: "SEMICOLON",
            },
            Parameters: { Bucket: "items", Key: "people.csv" },
          },
        },
        identity,
      ),
    );
    const first = await run("csv-first-row", {});
    expect(first.status, JSON.stringify(first)).toBe("SUCCEEDED");
    expect(first.output).toEqual([
      { id: "1", name: "Smith; John", note: 'said "hi"' },
      { id: "2", name: "Jane", note: "two\nlines" },
      { id: "3", name: "", note: "" },
    ]);

    await s3.put("items", "rows.csv", "a,1\nb,2\nc,3\nd,4\n");
    await create("csv-given", {
      QueryLanguage: "JSONata",
      ...machine(
        {
          ItemReader: {
            Resource: "arn:aws:states:::s3:getObject",
            ReaderConfig: {
              InputType: "CSV",
              CSVHeaderLocation: "GIVEN",
              CSVHeaders: ["letter", "number"],
              MaxItems: "{% $states.input.max %}",
            },
            Arguments: { Bucket: "items", Key: "{% $states.input.key %}" },
          },
          ItemSelector: {
            row: "{% $states.context.Map.Item.Value %}",
            index: "{% $states.context.Map.Item.Index %}",
          },
        },
        identity,
      ),
    });
    const given = await run("csv-given", { key: "rows.csv", max: 2 });
    expect(given.status, JSON.stringify(given)).toBe("SUCCEEDED");
    expect(given.output).toEqual([
      { row: { letter: "a", number: "1" }, index: 0 },
      { row: { letter: "b", number: "2" }, index: 1 },
    ]);
  }, 60_000);

  it("lists the objects under a prefix as items (s3:listObjectsV2)", async () => {
    for (const key of ["docs/a.txt", "docs/b.txt", "docs/c/d.txt", "other/e.txt"]) {
      await s3.put("listing", key, `content of ${key}`);
    }
    await create(
      "listing",
      machine(
        {
          ItemReader: {
            Resource: "arn:aws:states:::s3:listObjectsV2",
            Parameters: { Bucket: "listing", Prefix: "docs/" },
          },
        },
        {
          StartAt: "Key",
          States: {
            Key: {
              Type: "Pass",
              Parameters: { "key.$": "$.Key", "size.$": "$.Size", "class.$": "$.StorageClass" },
              End: true,
            },
          },
        },
      ),
    );
    const done = await run("listing", {});
    expect(done.status, JSON.stringify(done)).toBe("SUCCEEDED");
    expect(done.output).toEqual(
      ["docs/a.txt", "docs/b.txt", "docs/c/d.txt"].map((key) => ({
        key,
        size: Buffer.byteLength(`content of ${key}`),
        class: "STANDARD",
      })),
    );
  }, 60_000);

  it("fails the Map with States.ItemReaderFailed naming the object and the line", async () => {
    await s3.put("items", "bad.jsonl", '{"ok":1}\n{"ok":2}\n{not json}\n{"ok":4}\n');
    await s3.put("items", "bad.csv", 'a,b\n1,2\n3,x"y\n');
    for (const type of ["JSONL", "CSV"]) {
      await create(
        `reader-${type.toLowerCase()}`,
        machine(
          {
            ItemReader: {
              Resource: "arn:aws:states:::s3:getObject",
              ReaderConfig: { InputType: type },
              Parameters: { "Bucket.$": "$.bucket", "Key.$": "$.key" },
            },
          },
          identity,
        ),
      );
    }
    const badLine = await run("reader-jsonl", { bucket: "items", key: "bad.jsonl" });
    expect(badLine).toMatchObject({ status: "FAILED", error: "States.ItemReaderFailed" });
    expect(badLine.cause).toContain("s3://items/bad.jsonl line 3");

    const badRow = await run("reader-csv", { bucket: "items", key: "bad.csv" });
    expect(badRow).toMatchObject({ status: "FAILED", error: "States.ItemReaderFailed" });
    expect(badRow.cause).toContain("s3://items/bad.csv line 3");

    const missingKey = await run("reader-jsonl", { bucket: "items", key: "nowhere.jsonl" });
    expect(missingKey).toMatchObject({ status: "FAILED", error: "States.ItemReaderFailed" });
    expect(missingKey.cause).toContain("s3://items/nowhere.jsonl");
    expect(missingKey.cause).toContain("NoSuchKey");

    const missingBucket = await run("reader-jsonl", { bucket: "no-such-bucket", key: "x.jsonl" });
    expect(missingBucket).toMatchObject({ status: "FAILED", error: "States.ItemReaderFailed" });
    expect(missingBucket.cause).toContain("s3://no-such-bucket/x.jsonl");
  }, 60_000);
});

describe("Distributed Map: ItemBatcher, tolerated failures, ResultWriter NONE", () => {
  it("gives each child a batch of items with the BatchInput", async () => {
    await s3.put("items", "batch.jsonl", jsonl(Array.from({ length: 25 }, (_, i) => ({ id: i }))));
    await create(
      "batches",
      machine(
        {
          ItemReader: {
            Resource: "arn:aws:states:::s3:getObject",
            ReaderConfig: { InputType: "JSONL" },
            Parameters: { Bucket: "items", Key: "batch.jsonl" },
          },
          ItemBatcher: { MaxItemsPerBatch: 10, BatchInput: { "tag.$": "$.tag" } },
        },
        {
          StartAt: "Count",
          States: {
            Count: {
              Type: "Pass",
              Parameters: {
                "count.$": "States.ArrayLength($.Items)",
                "first.$": "$.Items[0].id",
                "tag.$": "$.BatchInput.tag",
              },
              End: true,
            },
          },
        },
      ),
    );
    const done = await run("batches", { tag: "nightly" });
    expect(done.status, JSON.stringify(done)).toBe("SUCCEEDED");
    expect(done.output).toEqual([
      { count: 10, first: 0, tag: "nightly" },
      { count: 10, first: 10, tag: "nightly" },
      { count: 5, first: 20, tag: "nightly" },
    ]);
  }, 60_000);

  it("tolerates failures up to the count, writes SUCCEEDED and FAILED files, fails past it", async () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ id: i, fail: i === 3 || i === 7 }));
    await s3.put("items", "some-fail.jsonl", jsonl(items));
    await create(
      "tolerant",
      machine(
        {
          ToleratedFailureCountPath: "$.tolerate",
          ItemReader: {
            Resource: "arn:aws:states:::s3:getObject",
            ReaderConfig: { InputType: "JSONL" },
            Parameters: { Bucket: "items", Key: "some-fail.jsonl" },
          },
          ResultWriter: {
            Resource: "arn:aws:states:::s3:putObject",
            Parameters: { Bucket: "results", Prefix: "none/" },
          },
        },
        {
          StartAt: "Check",
          States: {
            Check: {
              Type: "Choice",
              Choices: [{ Variable: "$.fail", BooleanEquals: true, Next: "Broken" }],
              Default: "Fine",
            },
            Broken: { Type: "Fail", Error: "Item.Broken", Cause: "this item fails" },
            Fine: { Type: "Pass", Parameters: { "done.$": "$.id" }, End: true },
          },
        },
      ),
    );
    const done = await run("tolerant", { tolerate: 2 });
    expect(done.status, JSON.stringify(done)).toBe("SUCCEEDED");
    const arn = done.output.MapRunArn as string;
    const id = arn.slice(arn.lastIndexOf(":") + 1);
    expect(done.output.ResultWriterDetails.Key).toBe(`none/${id}/manifest.json`);
    const succeeded = JSON.parse(await s3.get("results", `none/${id}/SUCCEEDED_0.json`));
    expect(succeeded).toHaveLength(8);
    expect(succeeded.map((child: { Output: string }) => JSON.parse(child.Output))).toEqual(
      items.filter((item) => !item.fail).map((item) => ({ done: item.id })),
    );
    expect(succeeded[0]).toMatchObject({ Status: "SUCCEEDED", OutputDetails: { Included: true } });
    const failed = JSON.parse(await s3.get("results", `none/${id}/FAILED_0.json`));
    expect(failed).toHaveLength(2);
    expect(failed.every((child: { Status: string }) => child.Status === "FAILED")).toBe(true);
    const manifest = JSON.parse(await s3.get("results", `none/${id}/manifest.json`));
    expect(manifest.ResultFiles.FAILED).toEqual([
      { Key: `none/${id}/FAILED_0.json`, Size: expect.any(Number) },
    ]);

    const over = await run("tolerant", { tolerate: 1 });
    expect(over).toMatchObject({
      status: "FAILED",
      error: "States.ExceedToleratedFailureThreshold",
    });
    const types = (await historyTypes(over.executionId)).map((event) => event.type);
    expect(types).toContain("MapRunStarted");
    expect(types).toContain("MapRunFailed");
    expect(types.indexOf("MapRunFailed")).toBeLessThan(types.indexOf("MapStateFailed"));
  }, 90_000);

  it("stopping the parent aborts the Map Run", async () => {
    await s3.put("items", "slow.jsonl", jsonl([{ id: 1 }, { id: 2 }, { id: 3 }]));
    await create(
      "slow",
      machine(
        {
          MaxConcurrency: 1,
          ItemReader: {
            Resource: "arn:aws:states:::s3:getObject",
            ReaderConfig: { InputType: "JSONL" },
            Parameters: { Bucket: "items", Key: "slow.jsonl" },
          },
        },
        { StartAt: "Sleep", States: { Sleep: { Type: "Wait", Seconds: 300, End: true } } },
      ),
    );
    const started = await stack.client.post("/v1/state-machines/slow/executions", { input: {} });
    expect(started.status).toBe(201);
    const id = encodeURIComponent(started.body.executionId);
    const mapRun = await stack.client.until(async () =>
      (await historyTypes(started.body.executionId)).find((e) => e.type === "MapRunStarted"),
    );
    const mapRunArn = mapRun.mapRunStartedEventDetails.mapRunArn as string;
    // The first item's child execution is waiting in its Wait state.
    const child = await stack.client.until(async () => {
      const listed = await stack.client.get(
        `/v1/executions?mapRun=${encodeURIComponent(mapRunArn)}`,
      );
      return listed.body.items?.[0] as { executionId: string } | undefined;
    });
    await stack.client.until(async () =>
      (await historyTypes(child.executionId)).some((e) => e.type === "WaitStateEntered")
        ? true
        : undefined,
    );
    const stop = await stack.client.post(`/v1/executions/${id}/stop`, {});
    expect(stop.status, stop.text).toBeLessThan(300);
    const ended = await stack.client.until(async () => {
      const record = await stack.client.get(`/v1/executions/${id}`);
      return record.body.status === "ABORTED" ? record.body : undefined;
    }, 20_000);
    expect(ended.status).toBe("ABORTED");
    const types = (await historyTypes(started.body.executionId)).map((event) => event.type);
    expect(types).toContain("MapRunAborted");
    // The stop reached the child execution: it ends ABORTED, its own history says so.
    const aborted = await stack.client.until(async () => {
      const record = await stack.client.get(
        `/v1/executions/${encodeURIComponent(child.executionId)}`,
      );
      return record.body.status === "ABORTED" ? record.body : undefined;
    });
    expect(aborted.status).toBe("ABORTED");
    expect((await historyTypes(child.executionId)).map((e) => e.type).at(-1)).toBe(
      "ExecutionAborted",
    );
  }, 60_000);
});
