import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { startStack, type Stack } from "./stack.js";

/**
 * Spans over the wire: the worker exports with OpenTelemetry's own OTLP/HTTP
 * exporter (JSON) to a receiver in this test, and an execution — a Pass, an HTTP
 * Task calling a local server, a Map of two items — arrives as one trace with the
 * right parent links, under the span of the start's `traceparent`. Its worker's
 * line for a failing attempt is JSON with the correlation fields.
 */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number; message?: string };
}

let receiver: { url: string; spans: OtlpSpan[]; contentTypes: string[]; server: Server };
let service: FakeServer;
let stack: Stack;

const TRACE = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";

async function startReceiver(): Promise<typeof receiver> {
  const spans: OtlpSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/v1/traces") {
        contentTypes.push(String(req.headers["content-type"]));
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const rs of body.resourceSpans)
          for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, spans, contentTypes, server };
}

beforeAll(async () => {
  receiver = await startReceiver();
  service = await startFakeServer((request) =>
    request.path === "/broken" ? { status: 500, body: { no: 1 } } : { body: { ok: true } },
  );
  // The exporter reads its standard variables itself: a short batch delay, so spans
  // reach the receiver in a tenth of a second instead of five.
  stack = await startStack({
    apiKeys: "",
    egressAllow: "127.0.0.1",
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" },
  });
  const call = (path: string) => ({
    Type: "Task",
    Resource: "arn:aws:states:::http:invoke",
    Parameters: { ApiEndpoint: `${service.url}${path}`, Method: "POST", RequestBody: {} },
    ResultPath: null,
  });
  await stack.client.post("/v1/state-machines", {
    name: "traced",
    definition: {
      StartAt: "Prepare",
      States: {
        Prepare: { Type: "Pass", Result: [1, 2], ResultPath: "$.items", Next: "Call" },
        Call: { ...call("/work"), Next: "Fan" },
        Fan: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemProcessor: {
            ProcessorConfig: { Mode: "INLINE" },
            StartAt: "Item",
            States: { Item: { Type: "Pass", End: true } },
          },
          End: true,
        },
      },
    },
  });
  await stack.client.post("/v1/state-machines", {
    name: "naps",
    definition: { StartAt: "Nap", States: { Nap: { Type: "Wait", Seconds: 600, End: true } } },
  });
  await stack.client.post("/v1/state-machines", {
    name: "breaks",
    definition: { StartAt: "Call", States: { Call: { ...call("/broken"), End: true } } },
  });
});

afterAll(async () => {
  await stack?.close();
  await service?.close();
  await new Promise((resolve) => receiver?.server.close(resolve));
});

const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

describe("OTLP export", () => {
  it("exports an execution's spans as one trace with the right parents", async () => {
    const started = await stack.client.post(
      "/v1/state-machines/traced/executions?wait=20",
      {},
      { headers: { traceparent: `00-${TRACE}-${CALLER_SPAN}-01` } },
    );
    expect(started.body.status).toBe("SUCCEEDED");
    const mine = () => receiver.spans.filter((s) => s.traceId === TRACE);
    await stack.client.until(async () => {
      return mine().some((s) => s.name === "workflow traced") ? true : undefined;
    });
    const spans = mine();
    expect(receiver.contentTypes[0]).toContain("application/json");
    const named = (name: string) => spans.filter((s) => s.name === name);
    const one = (name: string) => {
      const found = named(name);
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };
    const execution = one("workflow traced");
    expect(execution.parentSpanId).toBe(CALLER_SPAN);
    expect(attr(execution, "workflow.execution.id")).toBe(started.body.executionId);
    expect(attr(execution, "workflow.execution.result")).toBe("success");
    for (const name of ["state Prepare", "state Call", "state Fan"]) {
      expect(one(name).parentSpanId, name).toBe(execution.spanId);
    }
    const fan = one("state Fan");
    const items = named("state Item");
    expect(items).toHaveLength(2);
    for (const item of items) expect(item.parentSpanId).toBe(fan.spanId);
    expect(items.map((i) => attr(i, "stepwise.map.iteration")).sort()).toEqual([0, 1]);
    const attempt = one("attempt Call");
    expect(attempt.parentSpanId).toBe(one("state Call").spanId);
    expect(attr(attempt, "workflow.execution.attempt")).toBe(1);
    const request = one("POST");
    expect(request.parentSpanId).toBe(attempt.spanId);
    expect(request.kind).toBe(3); // OTLP SPAN_KIND_CLIENT
    expect(attr(request, "http.response.status_code")).toBe(200);
    expect(attr(request, "url.full")).toBe(`${service.url}/work`);
    // The server called got the trace, under the request's span.
    const received = service.requests.find((r) => r.path === "/work")!;
    expect(received.headers.traceparent).toBe(`00-${TRACE}-${request.spanId}-01`);
    // Spans carry the committed times: each state within the execution.
    const start = BigInt(execution.startTimeUnixNano);
    const end = BigInt(execution.endTimeUnixNano);
    for (const span of spans) {
      expect(BigInt(span.startTimeUnixNano) >= start, span.name).toBe(true);
      expect(BigInt(span.endTimeUnixNano) <= end, span.name).toBe(true);
    }
    // Every span id is unique: nothing was exported twice under another id.
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
  });

  it("logs a failing task attempt as JSON with executionId, stateName, attempt and traceId", async () => {
    const started = await stack.client.post("/v1/state-machines/breaks/executions?wait=20", {});
    expect(started.body.status).toBe("FAILED");
    const record = await stack.client.get(`/v1/executions/${started.body.executionId}`);
    const line = await stack.client.until(async () =>
      stack.logs().find((l) => l.executionId === started.body.executionId),
    );
    expect(line).toMatchObject({
      level: 40,
      executionId: started.body.executionId,
      stateName: "Call",
      attempt: 1,
      traceId: record.body.traceId,
      error: "States.Http.StatusCode.500",
    });
    // Its spans say the same: the attempt and the execution ended in error.
    await stack.client.until(async () => {
      return receiver.spans.some(
        (s) => s.traceId === record.body.traceId && s.name === "workflow breaks",
      )
        ? true
        : undefined;
    });
    const mine = receiver.spans.filter((s) => s.traceId === record.body.traceId);
    const attempt = mine.find((s) => s.name === "attempt Call")!;
    expect(attempt.status?.code).toBe(2); // STATUS_CODE_ERROR
    expect(attr(attempt, "error.type")).toBe("States.Http.StatusCode.500");
    const execution = mine.find((s) => s.name === "workflow breaks")!;
    expect(execution.parentSpanId ?? "").toBe("");
    expect(execution.status?.code).toBe(2);
    expect(attr(execution, "workflow.execution.result")).toBe("failure");
  });

  it("exports a stopped execution's spans from the API that committed the stop", async () => {
    const started = await stack.client.post("/v1/state-machines/naps/executions", {});
    const id = started.body.executionId as string;
    await stack.client.until(async () => {
      const history = await stack.client.get(`/v1/executions/${id}/history`);
      return history.body.items.some((e: { type: string }) => e.type === "WaitStateEntered")
        ? true
        : undefined;
    });
    const stopped = await stack.client.post(`/v1/executions/${id}/stop`, { error: "Enough" });
    expect(stopped.body.status).toBe("ABORTED");
    const { traceId } = (await stack.client.get(`/v1/executions/${id}`)).body;
    const mine = () => receiver.spans.filter((s) => s.traceId === traceId);
    await stack.client.until(async () => {
      return mine().some((s) => s.name === "workflow naps") ? true : undefined;
    });
    const execution = mine().find((s) => s.name === "workflow naps")!;
    expect(attr(execution, "workflow.execution.result")).toBe("cancellation");
    const nap = mine().find((s) => s.name === "state Nap")!;
    expect(nap.parentSpanId).toBe(execution.spanId);
    expect(nap.status?.code).toBe(2);
    expect(attr(nap, "stepwise.state.type")).toBe("Wait");
  });
});
