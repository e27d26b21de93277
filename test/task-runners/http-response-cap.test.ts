import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEgressAllow } from "../../task-runners/egress.js";
import { httpRunner, MAX_RESPONSE_BYTES } from "../../task-runners/http.js";
import { TaskError } from "../../task-runners/runner.js";

/**
 * A response body is read up to the cap and no further: a server offering 200 MB
 * (chunked, or announced by Content-Length) sees its connection closed after a
 * fraction of it, and the task fails with States.DataLimitExceeded. Timing and
 * memory figures are in bench/http-response-cap.ts; the RSS bound here is generous.
 */
const OFFER = 200 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, "x");
let server: Server;
let port: number;
const sent: { bytes: number; closedEarly: boolean }[] = [];

beforeAll(async () => {
  // 8 MB of zeros in ~8 KB: the cap counts decoded bytes.
  const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024));
  server = createServer((req, res) => {
    if (req.url === "/gzip") {
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      res.end(bomb);
      return;
    }
    const record = { bytes: 0, closedEarly: false };
    sent.push(record);
    const announce = req.url === "/announced";
    res.writeHead(200, {
      "content-type": "text/plain",
      ...(announce ? { "content-length": String(OFFER) } : {}),
    });
    res.on("close", () => (record.closedEarly = record.bytes < OFFER));
    const pump = (): void => {
      while (record.bytes < OFFER && !res.destroyed) {
        record.bytes += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once("drain", pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server?.close());

const runner = httpRunner({ egress: parseEgressAllow("127.0.0.1") });

async function fetch200MB(path: string): Promise<TaskError> {
  const err = await runner
    .run({
      resource: "arn:aws:states:::http:invoke",
      stateName: "Big",
      taskId: `big${path}`,
      operationKey: `big${path}`,
      executionId: "cap-test",
      attempt: 1,
      input: { ApiEndpoint: `http://127.0.0.1:${port}${path}` },
      signal: new AbortController().signal,
    })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(TaskError);
  return err as TaskError;
}

describe("HTTP response body cap", () => {
  it.each(["/chunked", "/announced"])(
    "%s: 200 MB on offer, States.DataLimitExceeded after the cap, connection closed early",
    async (path) => {
      const before = process.memoryUsage().rss;
      const err = await fetch200MB(path);
      expect(err.error).toBe("States.DataLimitExceeded");
      expect(err.cause).toContain(`over ${MAX_RESPONSE_BYTES} bytes`);
      expect(err.cause).toContain("STEPWISE_HTTP_MAX_RESPONSE_BYTES");
      const record = await waitFor(() => (sent.at(-1)?.closedEarly ? sent.at(-1) : undefined));
      expect(record.bytes).toBeLessThan(OFFER / 4);
      expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
    },
  );

  it("counts decoded bytes: a small gzip body that inflates past the cap fails too", async () => {
    const err = await fetch200MB("/gzip");
    expect(err.error).toBe("States.DataLimitExceeded");
  });

  it("a body under the cap is read whole", async () => {
    const small = httpRunner({ egress: parseEgressAllow("127.0.0.1"), maxResponseBytes: OFFER });
    const result = (await small.run({
      resource: "http:invoke",
      stateName: "Gz",
      taskId: "gz",
      operationKey: "gz",
      executionId: "cap-test",
      attempt: 1,
      input: { ApiEndpoint: `http://127.0.0.1:${port}/gzip` },
      signal: new AbortController().signal,
    })) as { ResponseBody: string };
    expect(result.ResponseBody.length).toBe(8 * 1024 * 1024);
  });
});

async function waitFor<T>(check: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("the server never saw its connection close");
    await new Promise((r) => setTimeout(r, 10));
  }
}
