import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A tiny HTTP server on 127.0.0.1 for the examples' end-to-end tests: it stands in for
 * a chat-completions model, a tool service, an order service or a Map worker. Each
 * test gives it a handler; it records every request so tests can assert what the
 * state machine sent (and how many calls were in flight at once).
 */
export interface FakeRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: unknown;
}

export interface FakeResponse {
  status?: number;
  body?: unknown;
  /** Delay the answer (to observe concurrency). */
  delayMs?: number;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
}

export interface FakeServer {
  url: string;
  requests: FakeRequest[];
  /** The most requests that were being answered at the same moment. */
  maxInFlight: number;
  close(): Promise<void>;
}

export async function startFakeServer(
  handler: (request: FakeRequest) => FakeResponse | Promise<FakeResponse>,
): Promise<FakeServer> {
  let inFlight = 0;
  const state: FakeServer = {
    url: "",
    requests: [],
    maxInFlight: 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        inFlight++;
        state.maxInFlight = Math.max(state.maxInFlight, inFlight);
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown = text;
        try {
          body = text === "" ? undefined : JSON.parse(text);
        } catch {
          // keep the text
        }
        const request: FakeRequest = {
          method: req.method ?? "GET",
          path: (req.url ?? "/").split("?")[0]!,
          headers: req.headers,
          body,
        };
        state.requests.push(request);
        let answer: FakeResponse;
        try {
          answer = await handler(request);
        } catch (err) {
          answer = { status: 500, body: { message: (err as Error).message } };
        }
        if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
        inFlight--;
        res.writeHead(answer.status ?? 200, {
          "content-type": "application/json",
          ...answer.headers,
        });
        res.end(JSON.stringify(answer.body ?? {}));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
