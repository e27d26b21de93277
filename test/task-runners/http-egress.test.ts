import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import { parseEgressAllow } from "../../task-runners/egress.js";
import { httpRunner } from "../../task-runners/http.js";
import { TaskError, type TaskRunner } from "../../task-runners/runner.js";

/**
 * The HTTP runner against real servers on 127.0.0.0/8 and ::1: every spelling of a
 * loopback address is refused before a byte is sent, redirects are judged hop by
 * hop, only http(s) is spoken, and an allow-listed server works.
 */
interface Target {
  server: Server;
  port: number;
  hits: string[];
}

async function listen(
  host: string,
  handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'),
): Promise<Target> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, resolve);
  });
  return { server, port: (server.address() as AddressInfo).port, hits };
}

let v4: Target;
let v6: Target | undefined;
let redirector: Target;

beforeAll(async () => {
  v4 = await listen("127.0.0.1");
  v6 = await listen("::1").catch(() => undefined);
  // On 127.0.0.2 (all of 127/8 is loopback on Linux), sends its callers to `?to=`.
  redirector = await listen("127.0.0.2", (req, res) => {
    const to = new URL(req.url ?? "/", "http://x").searchParams.get("to") ?? "/";
    res.writeHead(302, { location: to }).end();
  });
});
afterAll(async () => {
  for (const t of [v4, v6, redirector]) t?.server.close();
});

let taskCount = 0;
async function call(runner: TaskRunner, input: Json): Promise<Json> {
  taskCount++;
  return runner.run({
    resource: "arn:aws:states:::http:invoke",
    stateName: "Call",
    taskId: `t${taskCount}`,
    operationKey: `t${taskCount}`,
    executionId: "egress-test",
    attempt: 1,
    input,
    signal: new AbortController().signal,
  });
}

async function failure(runner: TaskRunner, input: Json): Promise<TaskError> {
  const err = await call(runner, input).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TaskError);
  return err as TaskError;
}

describe("HTTP tasks and the egress policy", () => {
  const closed = httpRunner({ egress: parseEgressAllow("") });

  it.each([
    "http://127.0.0.1:PORT/",
    "http://localhost:PORT/",
    "http://127.1:PORT/",
    "http://2130706433:PORT/",
    "http://0x7f.0.0.1:PORT/",
    "http://0.0.0.0:PORT/",
    "http://[::ffff:127.0.0.1]:PORT/",
    "https://127.0.0.1:PORT/",
  ])("refuses %s before connecting", async (endpoint) => {
    const err = await failure(closed, { ApiEndpoint: endpoint.replace("PORT", String(v4.port)) });
    expect(err.error).toBe("States.Http.Socket");
    expect(err.cause).toMatch(/refused by the egress policy/);
    expect(err.cause).toMatch(/STEPWISE_EGRESS_ALLOW/);
    expect(v4.hits).toEqual([]);
  });

  it("refuses [::1]", async () => {
    const port = v6?.port ?? v4.port;
    const err = await failure(closed, { ApiEndpoint: `http://[::1]:${port}/` });
    expect(err.error).toBe("States.Http.Socket");
    expect(err.cause).toMatch(/::1 is a loopback address, refused by the egress policy/);
    expect(v6?.hits ?? []).toEqual([]);
  });

  it.each(["data:application/json,{}", "file:///etc/passwd", "ftp://127.0.0.1/"])(
    "speaks only http and https: %s is refused",
    async (endpoint) => {
      const err = await failure(closed, { ApiEndpoint: endpoint });
      expect(err.error).toBe("States.Http.Socket");
      expect(err.cause).toMatch(/URLs are refused by the egress policy \(only http: and https:\)/);
    },
  );

  it("an allow-listed server works, redirects to it included", async () => {
    const open = httpRunner({ egress: parseEgressAllow("127.0.0.1, 127.0.0.2") });
    const direct = (await call(open, { ApiEndpoint: `http://127.0.0.1:${v4.port}/a` })) as {
      StatusCode: number;
      ResponseBody: Json;
    };
    expect(direct.StatusCode).toBe(200);
    expect(direct.ResponseBody).toEqual({ ok: true });
    const to = encodeURIComponent(`http://127.0.0.1:${v4.port}/b`);
    const redirected = (await call(open, {
      ApiEndpoint: `http://127.0.0.2:${redirector.port}/?to=${to}`,
    })) as { StatusCode: number };
    expect(redirected.StatusCode).toBe(200);
    expect(v4.hits).toEqual(["GET /a", "GET /b"]);
    v4.hits.length = 0;
  });

  it("a redirect to a refused address is refused on its hop", async () => {
    // The redirector is allowed; the loopback it points at is not.
    const runner = httpRunner({ egress: parseEgressAllow("127.0.0.2") });
    redirector.hits.length = 0;
    for (const target of [
      `http://127.0.0.1:${v4.port}/stolen`,
      `http://localhost:${v4.port}/stolen`,
      "data:text/plain,hello",
    ]) {
      const err = await failure(runner, {
        ApiEndpoint: `http://127.0.0.2:${redirector.port}/?to=${encodeURIComponent(target)}`,
      });
      expect(err.error).toBe("States.Http.Socket");
      expect(err.cause).toMatch(/refused by the egress policy/);
    }
    expect(redirector.hits).toHaveLength(3);
    expect(v4.hits).toEqual([]);
  });

  it("a host name is judged by the addresses it resolves to, unless opened by name", async () => {
    const err = await failure(closed, { ApiEndpoint: `http://localhost:${v4.port}/` });
    expect(err.cause).toMatch(/localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    const byName = httpRunner({ egress: parseEgressAllow("localhost") });
    const answer = (await call(byName, { ApiEndpoint: `http://localhost:${v4.port}/named` })) as {
      StatusCode: number;
    };
    expect(answer.StatusCode).toBe(200);
    expect(v4.hits).toEqual(["GET /named"]);
    v4.hits.length = 0;
  });
});
