import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer } from "../../api/server.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { deleteKeys, REDIS_URL } from "../integration/helpers.js";
import { exited, logLines, spawnStepwise, testPrefix, until, type Spawned } from "./processes.js";

/**
 * One log line per request (api/request-log.ts), from `stepwise serve` as a user runs
 * it: `debug` for a request that went well, `info` for a 4xx and for one that took a
 * second or more, `error` with its stack for a 5xx; never fastify's two lines.
 */
const SECRET = "request-log-secret-0123456789";
const headers = { authorization: `Bearer ${SECRET}`, "content-type": "application/json" };
const DEBUG = 20;
const INFO = 30;
const WARN = 40;
const SLOW_MS = 1000;

/** The level a request that went well is logged at: a busy machine may make it slow. */
const wellLevel = (line: Line) => ((line.responseTime as number) >= SLOW_MS ? INFO : DEBUG);

interface Served extends Spawned {
  base: string;
  prefix: string;
}

type Line = ReturnType<typeof logLines>[number];

const served: Served[] = [];

async function serve(level: "debug" | "info"): Promise<Served> {
  const prefix = testPrefix("request-log");
  const spawned = spawnStepwise(["serve"], {
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      REDIS_URL,
      STEPWISE_PREFIX: prefix,
      STEPWISE_API_KEYS: `ops:admin:${SECRET}`,
      LOG_LEVEL: level,
    },
  });
  const one = { ...spawned, base: "", prefix };
  served.push(one);
  // Loading the sources through tsx is slow beside a busy suite.
  const port = await until(
    async () =>
      /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(spawned.output())?.[1] ??
      (spawned.child.exitCode !== null ? "exited" : undefined),
    60_000,
  );
  if (port === "exited") throw new Error(`serve stopped before listening:\n${spawned.output()}`);
  one.base = `http://127.0.0.1:${port}`;
  return one;
}

/** The request lines of a process. */
const requestLines = (s: Served): Line[] =>
  logLines(s.output()).filter((l) => l.msg === "request completed");

/** The one request line of `method url`, once the process has written it. */
function lineOf(s: Served, method: string, url: string): Promise<Line> {
  return until(
    async () => requestLines(s).find((l) => l.method === method && l.url === url),
    10_000,
  );
}

/** Every line the process wrote bound to this request id. */
const linesOfRequest = (s: Served, reqId: unknown): Line[] =>
  logLines(s.output()).filter((l) => l.reqId === reqId);

let debug: Served;
let info: Served;

beforeAll(async () => {
  [debug, info] = await Promise.all([serve("debug"), serve("info")]);
}, 90_000);

afterAll(async () => {
  for (const s of served) {
    s.child.kill("SIGTERM");
    await exited(s.child).catch(() => s.child.kill("SIGKILL"));
    await deleteKeys(REDIS_URL, s.prefix);
  }
}, 60_000);

describe("stepwise serve, LOG_LEVEL=debug", () => {
  it("writes one debug line per request that went well, naming the caller", async () => {
    expect((await fetch(`${debug.base}/health`)).status).toBe(200);
    const created = await fetch(`${debug.base}/v1/state-machines`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "p",
        definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
      }),
    });
    expect(created.status).toBe(201);

    const health = await lineOf(debug, "GET", "/health");
    expect(health.responseTime).toEqual(expect.any(Number));
    expect(health).toMatchObject({ statusCode: 200, reqId: expect.any(String) });
    expect(health.level).toBe(wellLevel(health));
    expect(health).not.toHaveProperty("caller"); // a public route checks no key
    const create = await lineOf(debug, "POST", "/v1/state-machines");
    expect(create).toMatchObject({ statusCode: 201, caller: "ops" });
    expect(create.level).toBe(wellLevel(create));
    // Nothing else about either request: no "incoming request" line beside it.
    expect(linesOfRequest(debug, health.reqId)).toHaveLength(1);
    expect(linesOfRequest(debug, create.reqId)).toHaveLength(1);
  });

  it("writes a 4xx at info", async () => {
    const missing = await fetch(`${debug.base}/v1/no-such-route`, { headers });
    expect(missing.status).toBe(404);
    const line = await lineOf(debug, "GET", "/v1/no-such-route");
    expect(line).toMatchObject({ level: INFO, statusCode: 404 });
    expect(linesOfRequest(debug, line.reqId)).toHaveLength(1);
    expect(logLines(debug.output()).some((l) => l.msg === "incoming request")).toBe(false);
  });
});

describe("stepwise serve, LOG_LEVEL=info", () => {
  it("writes nothing for a request that went well, a line for a 4xx", async () => {
    expect((await fetch(`${info.base}/health`)).status).toBe(200);
    const refused = await fetch(`${info.base}/v1/state-machines`, {
      headers: { authorization: "Bearer not-a-key-of-this-service" },
    });
    expect(refused.status).toBe(401);
    // Lines come out in order: once the 401's is there, the /health one would be too.
    expect(await lineOf(info, "GET", "/v1/state-machines")).toMatchObject({
      level: INFO,
      statusCode: 401,
    });
    // None for /health (one a busy machine made slow would be worth a line).
    const fast = (l: Line) => (l.responseTime as number) < SLOW_MS;
    expect(requestLines(info).filter((l) => l.url === "/health" && fast(l))).toEqual([]);
  });

  it("writes a request that took a second or more at info, with the execution it started", async () => {
    const created = await fetch(`${info.base}/v1/state-machines`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "nap",
        definition: { StartAt: "Nap", States: { Nap: { Type: "Wait", Seconds: 2, End: true } } },
      }),
    });
    expect(created.status).toBe(201);
    const run = await fetch(`${info.base}/v1/state-machines/nap/executions?wait=20`, {
      method: "POST",
      headers,
      body: JSON.stringify({ input: {} }),
    });
    const { executionId, status } = (await run.json()) as { executionId: string; status: string };
    expect(status).toBe("SUCCEEDED");

    const line = await lineOf(info, "POST", "/v1/state-machines/nap/executions?wait=20");
    expect(line).toMatchObject({ level: INFO, statusCode: 201, caller: "ops", executionId });
    expect(line.responseTime).toBeGreaterThanOrEqual(SLOW_MS);
    // The fast create before it was not worth a line at info.
    const creates = requestLines(info).filter(
      (l) => l.method === "POST" && l.url === "/v1/state-machines",
    );
    expect(creates.filter((l) => (l.responseTime as number) < SLOW_MS)).toEqual([]);
  });
});

/** What `serve` cannot set or provoke yet: buildServer's threshold, and a 5xx. */
describe("buildServer", () => {
  const prefix = testPrefix("request-log-inproc");
  afterAll(() => deleteKeys(REDIS_URL, prefix));

  it("logs at info past slowRequestMs, and a 5xx as one error line with its error", async () => {
    const lines: Line[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString("utf8").split("\n"))
          if (text.trim()) lines.push(JSON.parse(text) as Line);
        done();
      },
    });
    const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
    const app = await buildServer({
      runtime,
      logger: { level: "info", stream },
      slowRequestMs: 0,
      health: async () => {
        throw new Error("connect ECONNREFUSED 127.0.0.1:1");
      },
    });
    try {
      expect((await app.inject({ method: "GET", url: "/docs/json" })).statusCode).toBe(200);
      expect((await app.inject({ method: "GET", url: "/health" })).statusCode).toBe(503);
    } finally {
      await app.close();
      await runtime.close();
    }
    const docs = lines.filter((l) => l.url === "/docs/json");
    expect(docs).toMatchObject([{ level: INFO, msg: "request completed", statusCode: 200 }]);
    const health = lines.filter((l) => l.url === "/health");
    // Redis unavailable is told at warn, with its reason and no stack: not a bug.
    expect(health).toMatchObject([{ level: WARN, msg: "request completed", statusCode: 503 }]);
    expect(String(health[0]!.reason)).toContain("ECONNREFUSED");
    expect(health[0]!.err).toBeUndefined();
    expect(lines.filter((l) => l.reqId === health[0]!.reqId)).toHaveLength(1);
  });
});
