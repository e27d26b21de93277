import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type LogLine, type Stack } from "./stack.js";

/**
 * The API's log lines are pino JSON; those of a request that carries `traceparent`
 * name its trace, and a start's "request completed" line (its one line, at debug)
 * names the execution it started and that execution's trace.
 */
let stack: Stack;

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

beforeAll(async () => {
  stack = await startStack({ logLevel: "debug" });
  const created = await stack.client.post("/v1/state-machines", {
    name: "p",
    definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
  });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await stack?.close();
});

/** The first "request completed" line that `match` accepts, once the service has written it. */
const requestLine = (match: (line: LogLine) => boolean): Promise<LogLine> =>
  stack.client.until(async () =>
    stack.logs().find((l) => l.msg === "request completed" && match(l)),
  );

const completed = (reqId: unknown) =>
  stack.logs().find((l) => l.reqId === reqId && l.msg === "request completed");

describe("API log lines", () => {
  it("carry the traceparent's trace id, and a start's execution", async () => {
    const reply = await stack.client.post(
      "/v1/state-machines/p/executions",
      { name: "traced" },
      { headers: { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` } },
    );
    expect(reply.status).toBe(201);
    const { executionId } = reply.body as { executionId: string };
    const line = await requestLine((l) => l.traceId === TRACE);
    expect(completed(line.reqId)).toMatchObject({ traceId: TRACE, executionId });
  });

  it("name the trace a start without traceparent opened", async () => {
    const reply = await stack.client.post("/v1/state-machines/p/executions", { name: "own" });
    const { executionId } = reply.body as { executionId: string };
    const line = await requestLine((l) => l.executionId === executionId);
    const record = await stack.client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    // Read over HTTP: the record must carry its trace id for the comparison to mean anything.
    expect(record.body.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(line.traceId).toBe(record.body.traceId);
  });
});
