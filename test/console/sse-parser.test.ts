import { describe, expect, it } from "vitest";
import { SseParser } from "../../console/src/api/sse-parser.js";

/** The console's SSE parser (WHATWG "Parsing an event stream"), fed chunks split anywhere. */

const STREAM =
  "retry: 2000\n\n" +
  ': ping\n\nid: 1\nevent: history\ndata: {"id":1,"type":"ExecutionStarted"}\n\n' +
  'id: 2\r\nevent: history\r\ndata: {"id":2,\r\ndata: "type":"PassStateEntered"}\r\n\r\n' +
  'event: end\rdata: {"status":"SUCCEEDED"}\r\r';

const EXPECTED = [
  { event: "history", data: '{"id":1,"type":"ExecutionStarted"}', lastEventId: "1" },
  { event: "history", data: '{"id":2,\n"type":"PassStateEntered"}', lastEventId: "2" },
  { event: "end", data: '{"status":"SUCCEEDED"}', lastEventId: "2" },
];

describe("SseParser", () => {
  it("parses events, comments, multi-line data and all three line endings", () => {
    expect(new SseParser().push(STREAM)).toEqual(EXPECTED);
  });

  it("gives the same messages however the stream is cut into chunks", () => {
    for (let size = 1; size <= 7; size++) {
      const parser = new SseParser();
      const out = [];
      for (let i = 0; i < STREAM.length; i += size)
        out.push(...parser.push(STREAM.slice(i, i + size)));
      expect(out, `chunks of ${size}`).toEqual(EXPECTED);
    }
  });

  it("keeps an incomplete message until its blank line, names unnamed ones 'message'", () => {
    const parser = new SseParser();
    expect(parser.push("data: a\ndata:b")).toEqual([]);
    expect(parser.push("\n\n")).toEqual([{ event: "message", data: "a\nb", lastEventId: "" }]);
  });

  it("drops a message without data and ignores unknown fields", () => {
    const parser = new SseParser();
    expect(parser.push("event: nothing\n\nfoo: bar\ndata\n\n")).toEqual([
      { event: "message", data: "", lastEventId: "" },
    ]);
  });
});
