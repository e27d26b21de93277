import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, startStack, type Stack } from "./stack.js";

/**
 * Answers that fastify or Node give before a route runs come from the error registry
 * too (issue 13 saw fastify's `{"statusCode":400,…}` and a bare 431), and the
 * size template names what was too large.
 */
let stack: Stack;
let port: number;
beforeAll(async () => {
  stack = await startStack();
  port = Number(new URL(stack.url).port);
});
afterAll(async () => {
  await stack?.close();
});

/** Sends raw bytes and collects the whole answer (the server closes after it). */
function raw(text: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (c: Buffer) => (received += c.toString("utf8")));
    socket.on("error", reject);
    socket.on("close", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]);
      const text = received.slice(received.indexOf("\r\n\r\n") + 4);
      resolve({ status, body: text === "" ? undefined : JSON.parse(text) });
    });
    socket.end(text);
  });
}

function expectRegistryShape(body: unknown): void {
  expect(Object.keys(body as object).sort()).toEqual(["details", "error", "message"]);
}

describe("framework errors in the registry's shape", () => {
  it("a space in the path: 400 InvalidRequest", async () => {
    const answer = await raw("GET /v1/executions/a b HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(answer.status).toBe(400);
    expectRegistryShape(answer.body);
    expect(answer.body.error).toBe("InvalidRequest");
    expect(answer.body.message).toMatch(/percent-encoded/);
  });

  it("a URL over 16 KiB: 431 RequestHeaderFieldsTooLarge", async () => {
    const answer = await raw(
      `GET /v1/executions/${"a".repeat(17_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expectRegistryShape(answer.body);
    expect(answer.body.error).toBe("RequestHeaderFieldsTooLarge");
  });

  it("headers over 16 KiB: 431 too", async () => {
    const answer = await raw(
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(17_000)}\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expect(answer.body.error).toBe("RequestHeaderFieldsTooLarge");
  });

  it("garbage instead of HTTP: 400 InvalidRequest", async () => {
    const answer = await raw("HELLO\r\n\r\n");
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("InvalidRequest");
  });

  it("an unknown route: 404 RouteNotFound", async () => {
    const answer = await stack.client.get("/nowhere");
    expect(answer.status).toBe(404);
    expectRegistryShape(answer.body);
    expect(answer.body.error).toBe("RouteNotFound");
  });

  it("a task output over 256 KiB is named as a task output, not an execution input", async () => {
    const output = "x".repeat(300 * 1024);
    const answer = await stack.client.post(
      "/v1/task-tokens/some-token/success",
      { output },
      { key: KEYS.callback },
    );
    expect(answer.status).toBe(413);
    expect(answer.body.error).toBe("States.DataLimitExceeded");
    expect(answer.body.message).toMatch(/^The task output is \d+ bytes; the limit is 262144/);
    const start = await stack.client.post("/v1/state-machines/none/executions", {
      input: output,
    });
    expect(start.body.message).toMatch(/^The execution input is \d+ bytes/);
  });
});
