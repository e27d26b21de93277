import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stateMachineArn } from "../../runtime/store/ids.js";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { startStack, type Stack } from "./stack.js";

/**
 * W3C Trace Context over real HTTP: a start's `traceparent` (REST or the AWS
 * endpoint) is the execution's trace, a start without one gets a trace of its
 * own, and an HTTP task sends `traceparent` / `tracestate` of that trace.
 */
let stack: Stack;
let service: FakeServer;

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

beforeAll(async () => {
  service = await startFakeServer(() => ({ body: { ok: true } }));
  stack = await startStack({ apiKeys: "", egressAllow: "127.0.0.1" });
  await stack.client.post("/v1/state-machines", {
    name: "call",
    definition: {
      StartAt: "Call",
      States: {
        Call: {
          Type: "Task",
          Resource: "arn:aws:states:::http:invoke",
          Parameters: { ApiEndpoint: `${service.url}/work`, Method: "POST", RequestBody: {} },
          ResultPath: null,
          End: true,
        },
      },
    },
  });
});

afterAll(async () => {
  await stack?.close();
  await service?.close();
});

const callOf = (executionId: string) =>
  service.requests.find((r) => r.headers["x-stepwise-execution"] === executionId);

describe("trace context", () => {
  it("keeps the start's trace id and sends it, with tracestate, to the HTTP task's server", async () => {
    const started = await stack.client.post(
      "/v1/state-machines/call/executions?wait=20",
      { name: "joined" },
      {
        headers: {
          traceparent: `00-${TRACE}-${CALLER_SPAN}-01`,
          tracestate: "vendor=abc,other=x",
        },
      },
    );
    expect(started.body.status).toBe("SUCCEEDED");
    const record = await stack.client.get(`/v1/executions/${started.body.executionId}`);
    expect(record.body.traceId).toBe(TRACE);
    const call = callOf(started.body.executionId)!;
    const [version, traceId, spanId, flags] = String(call.headers.traceparent).split("-");
    expect({ version, traceId, flags }).toEqual({ version: "00", traceId: TRACE, flags: "01" });
    // The call's own span: a child of the attempt's, never the caller's span.
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(spanId).not.toBe(CALLER_SPAN);
    expect(call.headers.tracestate).toBe("vendor=abc,other=x");
  });

  it("opens a trace of its own without traceparent, or with a malformed one", async () => {
    for (const headers of [
      {} as Record<string, string>,
      { traceparent: `00-${"0".repeat(32)}-${CALLER_SPAN}-01` },
    ]) {
      const started = await stack.client.post(
        "/v1/state-machines/call/executions?wait=20",
        {},
        { headers },
      );
      const record = await stack.client.get(`/v1/executions/${started.body.executionId}`);
      expect(record.body.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(record.body.traceId).not.toBe("0".repeat(32));
      const call = callOf(started.body.executionId)!;
      expect(String(call.headers.traceparent).split("-")[1]).toBe(record.body.traceId);
      expect(call.headers.tracestate).toBeUndefined();
    }
  });

  it("honours traceparent on the AWS endpoint's StartExecution", async () => {
    const other = "0af7651916cd43dd8448eb211c80319c";
    const reply = await stack.client.post(
      "/",
      { stateMachineArn: stateMachineArn("call"), name: "aws-joined" },
      {
        contentType: "application/x-amz-json-1.0",
        headers: {
          "x-amz-target": "AWSStepFunctions.StartExecution",
          traceparent: `00-${other}-b7ad6b7169203331-01`,
        },
      },
    );
    expect(reply.status).toBe(200);
    const executionId = reply.body.executionArn as string;
    const record = await stack.client.get(`/v1/executions/${executionId}`);
    expect(record.body.traceId).toBe(other);
  });

  it("honours traceparent on StartSyncExecution: the Express run's HTTP task sends it", async () => {
    const aws = (action: string, body: object, headers: Record<string, string> = {}) =>
      stack.client.post("/", body, {
        contentType: "application/x-amz-json-1.0",
        headers: { "x-amz-target": `AWSStepFunctions.${action}`, ...headers },
      });
    const created = await aws("CreateStateMachine", {
      name: "quick-call",
      roleArn: "arn:aws:iam::123456789012:role/r",
      type: "EXPRESS",
      definition: JSON.stringify({
        StartAt: "Call",
        States: {
          Call: {
            Type: "Task",
            Resource: "arn:aws:states:::http:invoke",
            Parameters: { ApiEndpoint: `${service.url}/express`, Method: "GET" },
            ResultPath: null,
            End: true,
          },
        },
      }),
    });
    expect(created.status).toBe(200);
    const express = "5b8efff798038103d269b633813fc60c";
    const done = await aws(
      "StartSyncExecution",
      { stateMachineArn: created.body.stateMachineArn, name: "sync-joined" },
      { traceparent: `00-${express}-eee19b7ec3c1b174-01`, tracestate: "k=v" },
    );
    expect(done.body.status).toBe("SUCCEEDED");
    const call = service.requests.find((r) => r.path === "/express")!;
    expect(String(call.headers.traceparent).split("-")[1]).toBe(express);
    expect(call.headers.tracestate).toBe("k=v");
  });
});
