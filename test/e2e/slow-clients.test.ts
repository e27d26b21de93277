import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, startStack, type Stack } from "./stack.js";

/**
 * Slow clients over raw sockets (issue 13: unfinished headers and bodies kept
 * sockets open for minutes). With short limits configured, a socket that never
 * finishes its headers or its body is answered 408 from the error registry and
 * closed within the limit; a long poll that takes longer than the request timeout
 * to ANSWER is not cut, since the timeout covers receiving the request only.
 */
const HEADERS_MS = 400;
const REQUEST_MS = 800;
let stack: Stack;
let port: number;

beforeAll(async () => {
  stack = await startStack({
    env: {
      STEPWISE_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      STEPWISE_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
    },
  });
  port = Number(new URL(stack.url).port);
});
afterAll(async () => {
  await stack?.close();
});

interface Closed {
  afterMs: number;
  received: string;
}

/** Opens a socket, writes `text`, and resolves when the server closes it. */
function sendAndWait(text: string, at = port): { socket: Socket; closed: Promise<Closed> } {
  const started = Date.now();
  const socket = connect(at, "127.0.0.1");
  let received = "";
  socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
  socket.on("error", () => undefined);
  socket.write(text);
  const closed = new Promise<Closed>((resolve) =>
    socket.on("close", () => resolve({ afterMs: Date.now() - started, received })),
  );
  return { socket, closed };
}

function registryBody(received: string): { error: string; message: string; details: unknown[] } {
  return JSON.parse(received.slice(received.indexOf("\r\n\r\n") + 4));
}

describe("slow clients", () => {
  it("unfinished headers: 408 RequestTimeout and closed within the headers timeout", async () => {
    const { closed } = sendAndWait("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    const { afterMs, received } = await closed;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(registryBody(received)).toMatchObject({ error: "RequestTimeout", details: [] });
    expect(afterMs).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(afterMs).toBeLessThan(HEADERS_MS + 1500);
  });

  it("a body that never arrives (Content-Length: 100, 2 bytes sent) is cut at the request timeout", async () => {
    const { closed } = sendAndWait(
      `POST /v1/state-machines/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEYS.admin}\r\n` +
        "Content-Type: application/json\r\n" +
        "Content-Length: 100\r\n\r\n{}",
    );
    const { afterMs, received } = await closed;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(registryBody(received).error).toBe("RequestTimeout");
    expect(afterMs).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    expect(afterMs).toBeLessThan(REQUEST_MS + 1500);
  });

  it("a hundred sockets with unfinished headers are all closed", async () => {
    const sockets = Array.from({ length: 100 }, () => sendAndWait("GET /health HTTP/1.1\r\n"));
    const results = await Promise.all(sockets.map((s) => s.closed));
    expect(Math.max(...results.map((r) => r.afterMs))).toBeLessThan(HEADERS_MS + 2500);
  });

  it("a long poll answers after longer than the request timeout", async () => {
    const started = Date.now();
    const poll = await stack.client.get("/v1/activities/nobody-works-here/task?wait=2");
    expect(poll.status).toBe(204);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  });

  it("a start with ?wait= outlasts the request timeout too", async () => {
    const created = await stack.client.post("/v1/state-machines", {
      name: "slow",
      definition: { StartAt: "W", States: { W: { Type: "Wait", Seconds: 2, End: true } } },
    });
    expect(created.status).toBe(201);
    const run = await stack.client.post("/v1/state-machines/slow/executions?wait=10", {});
    expect(run.body).toMatchObject({ status: "SUCCEEDED" });
  });

  it("a client that sends a little at a time but finishes in time is served", async () => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
    const closed = new Promise((resolve) => socket.on("close", resolve));
    for (const part of [
      "GET /hea",
      "lth HTTP/1.1\r\n",
      "Host: x\r\n",
      "Connection: close\r\n\r\n",
    ]) {
      socket.write(part);
      await new Promise((r) => setTimeout(r, 50));
    }
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe("connection limit", () => {
  let small: Stack;
  beforeAll(async () => {
    small = await startStack({
      env: { STEPWISE_MAX_CONNECTIONS: "3", STEPWISE_HEADERS_TIMEOUT_MS: "5000" },
    });
  });
  afterAll(async () => {
    await small?.close();
  });

  it("connections past STEPWISE_MAX_CONNECTIONS are closed as they arrive", async () => {
    const at = Number(new URL(small.url).port);
    const held = Array.from({ length: 3 }, () => sendAndWait("GET /health HTTP/1.1\r\n", at));
    await new Promise((r) => setTimeout(r, 200));
    const extra = sendAndWait("GET /health HTTP/1.1\r\nHost: x\r\n\r\n", at);
    const { afterMs, received } = await extra.closed;
    expect(received).toBe("");
    expect(afterMs).toBeLessThan(1000);
    for (const h of held) h.socket.destroy();
  });
});
