import { describe, expect, it } from "vitest";
import type { MapState, StateScope } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import {
  ITEM_READER_RESOURCE,
  RESULT_WRITER_RESOURCE,
  transformResults,
  type ItemReaderRequest,
  type ResultWriterRequest,
} from "../../engine/states/map-io-resources.js";
import { runExecution } from "../../engine/drivers/memory.js";
import { compileProgram } from "../../engine/program.js";
import { redrivePlan } from "../../engine/redrive.js";
import { details, execute, ofType, single, types } from "./helpers.js";

/**
 * A Distributed Map in the pure engine, on the in-memory driver: the Map Run's
 * events, and its I/O asked of the driver as tasks on internal resources (the
 * worker serves them on S3: runtime/map-runs/), with the answers fed back.
 */
const identity: StateScope = { StartAt: "I", States: { I: { Type: "Pass", End: true } } };

function distributed(extra: Partial<MapState> = {}): MapState {
  return {
    Type: "Map",
    ItemProcessor: {
      ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
      ...identity,
    },
    End: true,
    ...extra,
  } as MapState;
}

const reader = (bucket = "b") => ({
  Resource: "arn:aws:states:::s3:getObject",
  ReaderConfig: { InputType: "JSONL", MaxItemsPath: "$.max" },
  Parameters: { Bucket: bucket, "Key.$": "$.key" },
});

describe("Distributed Map in the engine", () => {
  it("writes the Map Run's events where AWS does, around the iterations", async () => {
    const r = await execute(single(distributed({ Label: "L" })), { input: [1, 2] });
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual([1, 2]);
    const mapEvents = types(r.history).filter(
      (t) => t.startsWith("MapRun") || t.startsWith("MapState"),
    );
    expect(mapEvents).toEqual([
      "MapStateEntered",
      "MapStateStarted",
      "MapRunStarted",
      "MapRunSucceeded",
      "MapStateSucceeded",
      "MapStateExited",
    ]);
    const started = ofType(r.history, "MapRunStarted")[0]!;
    expect(details(started).mapRunArn).toMatch(
      /^arn:aws:states:local:000000000000:mapRun:machine\/L:[0-9a-f-]{36}$/,
    );
  });

  it("asks the driver for the items, with the reader's fields evaluated, then iterates them", async () => {
    const asked: ItemReaderRequest[] = [];
    const r = await execute(
      single(
        distributed({
          ItemReader: reader(),
          ItemSelector: { "v.$": "$$.Map.Item.Value", "k.$": "$.key" },
        }),
      ),
      {
        input: { key: "in.jsonl", max: 2 },
        tasks: {
          [ITEM_READER_RESOURCE]: (input) => {
            asked.push(input as unknown as ItemReaderRequest);
            return [{ a: 1 }, { a: 2 }];
          },
        },
      },
    );
    expect(asked).toEqual([
      {
        Resource: "arn:aws:states:::s3:getObject",
        Parameters: { Bucket: "b", Key: "in.jsonl" },
        ReaderConfig: { InputType: "JSONL" },
        MaxItems: 2,
      },
    ]);
    expect(r.output).toEqual([
      { v: { a: 1 }, k: "in.jsonl" },
      { v: { a: 2 }, k: "in.jsonl" },
    ]);
    // The reading is the Map's own: no Task events.
    expect(ofType(r.history, "TaskScheduled")).toHaveLength(0);
  });

  it("fails with States.ItemReaderFailed (Catch applies) when the reading fails", async () => {
    const r = await execute(
      {
        StartAt: "M",
        States: {
          M: {
            Type: "Map",
            ItemReader: reader(),
            ItemProcessor: {
              ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
              ...identity,
            },
            Next: "Done",
            Catch: [{ ErrorEquals: ["States.ItemReaderFailed"], Next: "Caught" }],
          } as MapState,
          Caught: { Type: "Pass", End: true },
          Done: { Type: "Pass", End: true },
        },
      },
      {
        input: { key: "bad.jsonl", max: 10 },
        tasks: {
          [ITEM_READER_RESOURCE]: () => {
            throw { error: "States.ItemReaderFailed", cause: "s3://b/bad.jsonl line 3: not JSON" };
          },
        },
      },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toMatchObject({
      Error: "States.ItemReaderFailed",
      Cause: expect.stringContaining("s3://b/bad.jsonl line 3: not JSON"),
    });
    expect(types(r.history)).toContain("MapStateFailed");
  });

  it("hands the results to the driver's writer and outputs where they went", async () => {
    const written: ResultWriterRequest[] = [];
    const r = await execute(
      single(
        distributed({
          ToleratedFailureCount: 1,
          ItemProcessor: {
            ProcessorConfig: { Mode: "DISTRIBUTED" },
            StartAt: "C",
            States: {
              C: {
                Type: "Choice",
                Choices: [{ Variable: "$", NumericEquals: 2, Next: "F" }],
                Default: "P",
              },
              F: { Type: "Fail", Error: "Bad" },
              P: { Type: "Pass", End: true },
            },
          } as never,
          ResultWriter: {
            Resource: "arn:aws:states:::s3:putObject",
            Parameters: { Bucket: "out", Prefix: "p" },
            WriterConfig: { Transformation: "FLATTEN" },
          },
        }),
      ),
      {
        input: [1, 2, 3],
        tasks: {
          [RESULT_WRITER_RESOURCE]: (input) => {
            const request = input as unknown as ResultWriterRequest;
            written.push(request);
            return {
              MapRunArn: request.MapRunArn,
              ResultWriterDetails: { Bucket: "out", Key: "k" },
            };
          },
        },
      },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({
      Bucket: "out",
      Prefix: "p",
      Transformation: "FLATTEN",
      OutputType: "JSON",
      Results: [
        { Status: "SUCCEEDED", Output: 1 },
        { Status: "FAILED", Output: null },
        { Status: "SUCCEEDED", Output: 3 },
      ],
    });
    expect(r.output).toEqual({
      MapRunArn: written[0]!.MapRunArn,
      ResultWriterDetails: { Bucket: "out", Key: "k" },
    });
    expect(types(r.history).filter((t) => t.startsWith("MapRun"))).toEqual([
      "MapRunStarted",
      "MapRunSucceeded",
    ]);
  });

  it("formats the output itself with WriterConfig alone", async () => {
    const r = await execute(
      single(distributed({ ResultWriter: { WriterConfig: { Transformation: "FLATTEN" } } })),
      { input: [[1, 2], 3, [4]] },
    );
    expect(r.output).toEqual([1, 2, 3, 4]);
    expect(transformResults([[1], { a: 1 }] as Json[], "COMPACT")).toEqual([[1], { a: 1 }]);
  });

  it("fails a Map Run past its tolerance with MapRunFailed before MapStateFailed", async () => {
    const r = await execute(
      single(
        distributed({
          ItemProcessor: {
            ProcessorConfig: { Mode: "DISTRIBUTED" },
            StartAt: "F",
            States: { F: { Type: "Fail", Error: "Bad", Cause: "no" } },
          } as never,
        }),
      ),
      { input: [1] },
    );
    expect(r.status).toBe("FAILED");
    const t = types(r.history);
    expect(t.indexOf("MapRunFailed")).toBeGreaterThan(-1);
    expect(t.indexOf("MapRunFailed")).toBeLessThan(t.indexOf("MapStateFailed"));
  });

  it("a redrive reruns only the failed items and still writes the results", async () => {
    const WORK = "arn:aws:lambda:us-east-1:123456789012:function:work";
    const calls: number[] = [];
    let failOnce = true;
    const written: ResultWriterRequest[] = [];
    const tasks = {
      [WORK]: (input: Json) => {
        const n = input as number;
        calls.push(n);
        if (n === 2 && failOnce) {
          failOnce = false;
          throw { error: "Work.Failed", cause: "once" };
        }
        return n * 10;
      },
      [RESULT_WRITER_RESOURCE]: (input: Json) => {
        const request = input as unknown as ResultWriterRequest;
        written.push(request);
        return { MapRunArn: request.MapRunArn, ResultWriterDetails: { Bucket: "out", Key: "k" } };
      },
    };
    const program = compileProgram(
      single(
        distributed({
          ItemProcessor: {
            ProcessorConfig: { Mode: "DISTRIBUTED" },
            StartAt: "W",
            States: { W: { Type: "Task", Resource: WORK, End: true } },
          } as never,
          ResultWriter: {
            Resource: "arn:aws:states:::s3:putObject",
            Parameters: { Bucket: "out", Prefix: "p" },
            WriterConfig: { Transformation: "COMPACT" },
          },
        }),
      ),
    );
    const failed = await runExecution(program, { input: [1, 2, 3], tasks, seed: "s" });
    expect(failed.status).toBe("FAILED");
    expect(written).toHaveLength(0);
    const plan = redrivePlan(program, failed.execution, failed.journal)!;
    const redriven = await runExecution(program, {
      tasks,
      redrive: { from: failed, plan, redriveCount: 1 },
    });
    expect(redriven.status).toBe("SUCCEEDED");
    expect(calls.filter((n) => n !== 2)).toEqual([1, 3]);
    expect(written).toHaveLength(1);
    expect(written[0]!.Results.map((r) => r.Output)).toEqual([10, 20, 30]);
    expect(redriven.output).toMatchObject({ ResultWriterDetails: { Bucket: "out", Key: "k" } });
    // The failed item's child execution goes on in its own history; the parent's has
    // no iteration, before or after the redrive.
    expect(types(redriven.history).filter((t) => t.startsWith("MapIteration"))).toEqual([]);
    const second = [...redriven.childExecutions.values()].find((c) => c.name.endsWith("-1"))!;
    const own = types(second.history);
    expect(own.indexOf("ExecutionFailed")).toBeLessThan(own.indexOf("ExecutionSucceeded"));
    // AWS writes ExecutionRedriven in the redriven child's own history, right after its end.
    expect(own[own.indexOf("ExecutionFailed") + 1]).toBe("ExecutionRedriven");
    expect(second.history.map((e) => e.id)).toEqual(second.history.map((_, i) => i + 1));
    expect(second.status).toBe("SUCCEEDED");
  });
});
