import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "./client.js";
import { startCrashRig, type CrashRig } from "./crash-rig.js";
import { startS3Server, type S3Server } from "./distributed-map-s3.js";
import { exited } from "./processes.js";

/**
 * A Distributed Map survives its workers being SIGKILLed mid-run: one dies after
 * some iterations committed, the next dies while writing the results to S3, a
 * third finishes. The bucket then holds exactly the expected results, and the
 * history shows every item run once. API: `stepwise serve --no-worker`; workers:
 * `stepwise worker` processes of their own, all through bin/stepwise.js.
 */
let s3: S3Server;
let rig: CrashRig;
let client: Client;

beforeAll(async () => {
  s3 = await startS3Server();
  await s3.createBucket("items");
  await s3.createBucket("results");
  rig = await startCrashRig("distributed-map-crash", s3.env);
  client = rig.client;
}, 60_000);

afterAll(async () => {
  await rig?.close();
  await s3?.close();
});

const worker = (crash?: { at: string; after: number }) => rig.worker(crash);

describe("Distributed Map and worker crashes", () => {
  it("loses nothing and runs nothing twice when workers are SIGKILLed mid-run", async () => {
    const items = Array.from({ length: 200 }, (_, i) => ({ id: i }));
    await s3.put("items", "many.jsonl", items.map((item) => JSON.stringify(item)).join("\n"));
    const definition = {
      StartAt: "Process",
      States: {
        Process: {
          Type: "Map",
          MaxConcurrency: 20,
          ItemReader: {
            Resource: "arn:aws:states:::s3:getObject",
            ReaderConfig: { InputType: "JSONL" },
            Parameters: { Bucket: "items", Key: "many.jsonl" },
          },
          ItemProcessor: {
            ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
            StartAt: "Tag",
            States: {
              Tag: {
                Type: "Pass",
                Parameters: { "id.$": "$.id", "square.$": "States.MathAdd($.id, 0)" },
                End: true,
              },
            },
          },
          ResultWriter: {
            Resource: "arn:aws:states:::s3:putObject",
            Parameters: { Bucket: "results", Prefix: "crash" },
            WriterConfig: { Transformation: "COMPACT" },
          },
          End: true,
        },
      },
    };
    expect((await client.post("/v1/state-machines", { name: "crashy", definition })).status).toBe(
      201,
    );
    const started = await client.post("/v1/state-machines/crashy/executions", { input: {} });
    expect(started.status).toBe(201);
    const id = encodeURIComponent(started.body.executionId);

    // The first worker reads the items and dies after 50 iterations committed.
    const first = worker({ at: "afterCommit:child", after: 50 });
    await exited(first.child, 60_000);
    expect(first.child.signalCode).toBe("SIGKILL");
    // The second dies in its first task call: writing the results.
    const second = worker({ at: "duringTask", after: 1 });
    await exited(second.child, 60_000);
    expect(second.child.signalCode).toBe("SIGKILL");
    // The third finishes.
    const third = worker();
    try {
      const done = await client.until(async () => {
        const record = await client.get(`/v1/executions/${id}`);
        return record.body.status !== "RUNNING" ? record.body : undefined;
      }, 60_000);
      expect(done.status, JSON.stringify(done)).toBe("SUCCEEDED");
      const key = done.output.ResultWriterDetails.Key as string;
      const folder = key.slice(0, key.lastIndexOf("/") + 1);
      const written = JSON.parse(await s3.get("results", `${folder}SUCCEEDED_0.json`));
      expect(written).toEqual(items.map((item) => ({ id: item.id, square: item.id })));
      expect(await s3.keys("results", folder)).toEqual([
        `${folder}SUCCEEDED_0.json`,
        `${folder}manifest.json`,
      ]);
      const types: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.get(
          `/v1/executions/${id}/history?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        );
        expect(page.status, page.text).toBe(200);
        types.push(...(page.body.items as { type: string }[]).map((e) => e.type));
        cursor = page.body.nextCursor ?? undefined;
      } while (cursor);
      expect(types.filter((t) => t === "MapRunStarted")).toHaveLength(1);
      expect(types.filter((t) => t === "MapRunSucceeded")).toHaveLength(1);
      // Each item ran as a child execution of its own, once: its history starts and
      // succeeds once; the parent's holds no iteration.
      expect(types.filter((t) => t.startsWith("MapIteration"))).toEqual([]);
      const mapRun = done.output.ResultWriterDetails.Key.split("/").at(-2) as string;
      const children = await client.get(`/v1/executions?mapRun=${mapRun}&limit=1000`);
      expect(children.status, children.text).toBe(200);
      const listed = children.body.items as { executionId: string; status: string }[];
      expect(listed).toHaveLength(200);
      expect(listed.every((c) => c.status === "SUCCEEDED")).toBe(true);
      for (const child of listed) {
        const own = await client.get(
          `/v1/executions/${encodeURIComponent(child.executionId)}/history?limit=1000`,
        );
        const ownTypes = (own.body.items as { type: string }[]).map((e) => e.type);
        expect(ownTypes.filter((t) => t === "ExecutionStarted")).toHaveLength(1);
        expect(ownTypes.filter((t) => t === "ExecutionSucceeded")).toHaveLength(1);
      }
    } finally {
      third.child.kill("SIGTERM");
      await exited(third.child, 30_000);
    }
  }, 180_000);
});
