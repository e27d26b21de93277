import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exited, freePort, spawnStepwise } from "../e2e/processes.js";

/**
 * The client commands (`executions`, `machines`, `approvals`) when the service is not
 * there, not reachable or not the service: one line naming the address, the reason and
 * what to check, exit 1; never `internal error: TypeError: fetch failed` and a stack.
 * Each runs the real CLI process.
 */
async function stepwise(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; lines: string[] }> {
  const run = spawnStepwise(args, { env: { STEPWISE_URL: undefined, ...env } });
  const code = await exited(run.child);
  return { code, lines: run.output().trimEnd().split("\n") };
}

let nobody: number;
let silent: Server;
const held: Socket[] = [];
let notTheApi: HttpServer;
let hangsUp: HttpServer;
const port = (server: Server | HttpServer): number => (server.address() as { port: number }).port;

beforeAll(async () => {
  nobody = await freePort();
  // Accepts connections and never answers.
  silent = createServer((socket) => void held.push(socket));
  // Another HTTP server: a page, not the API.
  notTheApi = createHttpServer((_, res) => {
    res.writeHead(404, { "content-type": "text/html" }).end("<html><body>Not here</body></html>");
  });
  // Starts an event stream and drops the connection, as a service that stops.
  hangsUp = createHttpServer((_, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" }).write(": hello\n\n");
    setTimeout(() => res.socket?.destroy(), 200);
  });
  for (const server of [silent, notTheApi, hangsUp]) {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  }
});

afterAll(async () => {
  notTheApi.closeAllConnections();
  hangsUp.closeAllConnections();
  for (const socket of held) socket.destroy();
  for (const server of [silent, notTheApi, hangsUp]) {
    await new Promise((resolve) => server.close(resolve));
  }
});

describe("a service that is not there", () => {
  it.each([
    ["executions", "list"],
    ["machines", "list"],
    ["approvals", "list"],
    ["executions", "watch", "arn:x"],
    ["approvals", "approve", "apr-1"],
  ])("stepwise %s %s: one line, connection refused, exit 1", async (command, ...rest) => {
    const r = await stepwise([command, ...rest, "--url", `http://127.0.0.1:${nobody}`]);
    expect(r).toEqual({
      code: 1,
      lines: [
        `stepwise ${command}: cannot reach http://127.0.0.1:${nobody}: connection refused` +
          ` (is "stepwise serve" running there? check --url)`,
      ],
    });
  });

  it("names STEPWISE_URL when the address came from there", async () => {
    const r = await stepwise(["machines", "list"], { STEPWISE_URL: `http://127.0.0.1:${nobody}` });
    expect(r).toEqual({
      code: 1,
      lines: [
        `stepwise machines: cannot reach http://127.0.0.1:${nobody}: connection refused` +
          ` (is "stepwise serve" running there? check STEPWISE_URL)`,
      ],
    });
  });

  it("a host name that does not resolve: one line, exit 1", async () => {
    // .invalid never resolves (RFC 6761); without DNS at all the lookup fails instead.
    const r = await stepwise(["executions", "list", "--url", "http://stepwise-test.invalid:8080"]);
    expect(r.code).toBe(1);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(
      /^stepwise executions: cannot reach http:\/\/stepwise-test\.invalid:8080: (host 'stepwise-test\.invalid' not found|cannot look up host 'stepwise-test\.invalid' \(DNS did not answer\)) \(check --url\)$/,
    );
  });

  it("a service that accepts and never answers: --timeout, one line, exit 1", async () => {
    const r = await stepwise([
      "machines",
      "list",
      "--url",
      `http://127.0.0.1:${port(silent)}`,
      "--timeout",
      "1",
    ]);
    expect(r).toEqual({
      code: 1,
      lines: [
        `stepwise machines: cannot reach http://127.0.0.1:${port(silent)}: no answer within 1 s` +
          ` (is the service overloaded? raise --timeout, or check --url)`,
      ],
    });
  });

  it("a server that is not the Stepwise API: one line, exit 1", async () => {
    const url = `http://127.0.0.1:${port(notTheApi)}`;
    for (const args of [
      ["approvals", "list"],
      ["executions", "watch", "arn:x"],
    ]) {
      const r = await stepwise([...args, "--url", url]);
      expect(r).toEqual({
        code: 1,
        lines: [
          `stepwise ${args[0]}: ${url} answered 404 Not Found (text/html), not the Stepwise` +
            ` API's JSON (is it the Stepwise service? check --url)`,
        ],
      });
    }
  });

  it("a stream the service drops: one line, exit 1", async () => {
    const url = `http://127.0.0.1:${port(hangsUp)}`;
    const r = await stepwise(["executions", "watch", "arn:x", "--url", url]);
    expect(r).toEqual({
      code: 1,
      lines: [
        `stepwise executions: the connection to ${url} closed before the stream ended` +
          ` (did the service stop?)`,
      ],
    });
  });
});

describe("--url without a scheme", () => {
  it("is taken as http://", async () => {
    const r = await stepwise(["executions", "list", "--url", `localhost:${nobody}`]);
    expect(r).toEqual({
      code: 1,
      lines: [
        `stepwise executions: cannot reach http://localhost:${nobody}: connection refused` +
          ` (is "stepwise serve" running there? check --url)`,
      ],
    });
  });

  it("in STEPWISE_URL too", async () => {
    const r = await stepwise(["approvals", "list"], { STEPWISE_URL: `127.0.0.1:${nobody}` });
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([expect.stringContaining(`cannot reach http://127.0.0.1:${nobody}:`)]);
  });

  it("another scheme is a usage error (exit 2), one line and the pointer to --help", async () => {
    const r = await stepwise(["machines", "list", "--url", "ftp://127.0.0.1:8080"]);
    expect(r).toEqual({
      code: 2,
      lines: [
        "stepwise machines: --url 'ftp://127.0.0.1:8080' needs http:// or https://",
        "see 'stepwise machines --help'",
      ],
    });
  });
});
