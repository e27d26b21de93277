import { describe, expect, it } from "vitest";
import {
  atPointer,
  CsvItems,
  CsvRowParser,
  ItemParseError,
  jsonLine,
  LineSplitter,
} from "../../runtime/map-runs/item-parsers.js";
import { manifest, resultFiles, resultFolder } from "../../runtime/map-runs/result-writer.js";

/** Feeds `text` in chunks of `size` characters, as a stream would. */
function csv(text: string, delimiter = ",", size = 3) {
  const parser = new CsvRowParser(delimiter);
  const rows = [];
  for (let i = 0; i < text.length; i += size) rows.push(...parser.push(text.slice(i, i + size)));
  rows.push(...parser.end());
  return rows;
}

describe("CSV rows", () => {
  it("splits fields, unquotes, keeps delimiters and newlines inside quotes, in any chunking", () => {
    const text = 'a,b,c\n"x, y","say ""hi""","two\nlines"\r\nplain,,end\n';
    for (const size of [1, 2, 3, 7, 1000]) {
      expect(csv(text, ",", size)).toEqual([
        { line: 1, fields: ["a", "b", "c"] },
        { line: 2, fields: ["x, y", 'say "hi"', "two\nlines"] },
        { line: 4, fields: ["plain", "", "end"] },
      ]);
    }
  });

  it("takes each named delimiter, skips blank lines, reads a last row without a newline", () => {
    expect(csv("a|b\n\n1|2", "|")).toEqual([
      { line: 1, fields: ["a", "b"] },
      { line: 3, fields: ["1", "2"] },
    ]);
    expect(csv("a\tb\n1\t2\n", "\t").map((r) => r.fields)).toEqual([
      ["a", "b"],
      ["1", "2"],
    ]);
    expect(csv("a b;c\n", " ").map((r) => r.fields)).toEqual([["a", "b;c"]]);
    expect(csv('"",""\n').map((r) => r.fields)).toEqual([["", ""]]);
  });

  it("rejects a quote inside an unquoted field, text after a closing quote, an open quote", () => {
    expect(() => csv('a,b\n1,x"y\n')).toThrow(
      new ItemParseError(2, "a quote inside an unquoted field"),
    );
    expect(() => csv('a,b\n"1"x,2\n')).toThrow(/line 2: unexpected 'x' after a closing quote/);
    expect(() => csv('a,b\n1,"open\n2,3\n')).toThrow(/line 2: a quoted field is not closed/);
  });

  it("makes items of strings from the first row's headers or given ones", () => {
    const first = new CsvItems();
    expect(first.item({ line: 1, fields: ["id", "n"] })).toBeUndefined();
    expect(first.item({ line: 2, fields: ["1", "20"] })).toEqual({ id: "1", n: "20" });
    expect(() => first.item({ line: 3, fields: ["1"] })).toThrow(
      /line 3: the row has 1 fields but there are 2 headers/,
    );
    const given = new CsvItems(["x"]);
    expect(given.item({ line: 1, fields: ["x"] })).toEqual({ x: "x" });
    expect(() => new CsvItems().item({ line: 1, fields: ["a", "a"] })).toThrow(/duplicated/);
  });
});

describe("JSON Lines", () => {
  it("splits lines across chunks (LF and CRLF) and parses each", () => {
    const lines = new LineSplitter();
    const out = [...lines.push('{"a":1}\r\n{"b"'), ...lines.push(":2}\n\n[3]"), ...lines.end()];
    expect(out).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, text: '{"b":2}' },
      { line: 3, text: "" },
      { line: 4, text: "[3]" },
    ]);
    expect(out.map(({ text, line }) => jsonLine(text, line))).toEqual([
      { a: 1 },
      { b: 2 },
      undefined,
      [3],
    ]);
    expect(() => jsonLine("{nope}", 9)).toThrow(/^line 9: not JSON/);
  });

  it("points into a JSON document (ItemsPointer)", () => {
    const doc = { data: { "a/b": [1, 2], list: [{ x: [5] }] } };
    expect(atPointer(doc, "/data/a~1b")).toEqual([1, 2]);
    expect(atPointer(doc, "/data/list/0/x")).toEqual([5]);
    expect(atPointer(doc, "/data/missing")).toBeUndefined();
    expect(atPointer(doc, "")).toBe(doc);
  });
});

describe("ResultWriter files", () => {
  const arn = "arn:aws:states:us-east-1:123456789012:mapRun:m/Label:1111-2222";
  const exec = "arn:aws:states:us-east-1:123456789012:execution:m:run-1";
  const request = (
    transformation: "NONE" | "COMPACT" | "FLATTEN",
    outputType: "JSON" | "JSONL",
  ) => ({
    Bucket: "b",
    Prefix: "out",
    MapRunArn: arn,
    Transformation: transformation,
    OutputType: outputType,
    Results: [
      { Status: "SUCCEEDED" as const, Output: [1, 2] },
      { Status: "FAILED" as const, Output: null },
      { Status: "SUCCEEDED" as const, Output: { x: 3 } },
    ],
  });

  it("writes under <Prefix>/<map run id>/, a file per status that has children", () => {
    expect(resultFolder("out", arn)).toBe("out/1111-2222/");
    expect(resultFolder("out/", arn)).toBe("out/1111-2222/");
    expect(resultFolder("", arn)).toBe("1111-2222/");
    const files = resultFiles(request("FLATTEN", "JSON"), exec);
    expect(files.map((f) => [f.status, f.key])).toEqual([
      ["SUCCEEDED", "out/1111-2222/SUCCEEDED_0.json"],
      ["FAILED", "out/1111-2222/FAILED_0.json"],
    ]);
    expect(JSON.parse(files[0]!.body)).toEqual([1, 2, { x: 3 }]);
    const failed = JSON.parse(files[1]!.body);
    expect(failed).toEqual([
      expect.objectContaining({
        Status: "FAILED",
        Name: "1111-2222_1",
        ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:m/Label:1111-2222_1",
        StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:m",
      }),
    ]);
    expect(manifest(request("FLATTEN", "JSON"), files)).toEqual({
      DestinationBucket: "b",
      MapRunArn: arn,
      ResultFiles: {
        FAILED: [{ Key: "out/1111-2222/FAILED_0.json", Size: Buffer.byteLength(files[1]!.body) }],
        PENDING: [],
        SUCCEEDED: [
          { Key: "out/1111-2222/SUCCEEDED_0.json", Size: Buffer.byteLength(files[0]!.body) },
        ],
      },
    });
  });

  it("NONE keeps each child whole with its output as JSON text; COMPACT the outputs; JSONL a line each", () => {
    const none = JSON.parse(resultFiles(request("NONE", "JSON"), exec)[0]!.body);
    expect(none.map((c: { Output: string }) => JSON.parse(c.Output))).toEqual([[1, 2], { x: 3 }]);
    expect(none[0]).toMatchObject({ Status: "SUCCEEDED", OutputDetails: { Included: true } });
    const compact = resultFiles(request("COMPACT", "JSONL"), exec)[0]!;
    expect(compact.key).toBe("out/1111-2222/SUCCEEDED_0.jsonl");
    expect(compact.body).toBe('[1,2]\n{"x":3}\n');
  });
});
