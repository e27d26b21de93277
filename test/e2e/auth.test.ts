import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenAddress, parseApiKeys } from "../../api/auth.js";
import { KEYS, startStack, type Stack } from "./stack.js";

/** API keys and scopes: admin everything, run executions, callback only tokens and activities. */
let stack: Stack;
const definition = { StartAt: "P", States: { P: { Type: "Pass", End: true } } };
/** Parks on an activity nobody polls, so it can be stopped. */
const parked = {
  StartAt: "T",
  States: {
    T: {
      Type: "Task",
      Resource: "arn:aws:states:us-east-1:123456789012:activity:nobody",
      End: true,
    },
  },
};

beforeAll(async () => {
  stack = await startStack();
  expect((await stack.client.post("/v1/state-machines", { name: "m", definition })).status).toBe(
    201,
  );
  const created = await stack.client.post("/v1/state-machines", {
    name: "parked",
    definition: parked,
  });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await stack?.close();
});

describe("authentication", () => {
  it("401 without a key or with a wrong one; Bearer and x-api-key both work", async () => {
    const { client } = stack;
    const none = await client.get("/v1/state-machines", { key: null });
    expect(none.status).toBe(401);
    expect(none.body.error).toBe("Unauthorized");
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect((await client.get("/v1/state-machines", { key: KEYS.admin + "x" })).status).toBe(401);
    expect((await client.get("/v1/state-machines", { key: "" })).status).toBe(401);
    const viaHeader = await client.get("/v1/state-machines", {
      key: null,
      headers: { "x-api-key": KEYS.run },
    });
    expect(viaHeader.status).toBe(200);
    const basic = await client.get("/v1/state-machines", {
      key: null,
      headers: { authorization: `Basic ${Buffer.from(`a:${KEYS.admin}`).toString("base64")}` },
    });
    expect(basic.status).toBe(401);
  });

  it("health, metrics and docs are public", async () => {
    const { client } = stack;
    for (const path of ["/health", "/metrics", "/docs", "/docs/json"]) {
      expect((await client.get(path, { key: null })).status, path).toBe(200);
    }
  });

  it("scopes: what each key may do (403 Forbidden otherwise)", async () => {
    const { client } = stack;
    const started = await client.post(
      "/v1/state-machines/m/executions?wait=5",
      {},
      { key: KEYS.run },
    );
    expect(started.status).toBe(201);
    const id = encodeURIComponent(started.body.executionId);

    type Case = [string, string, unknown, { admin: boolean; run: boolean; callback: boolean }];
    const cases: Case[] = [
      [
        "POST",
        "/v1/state-machines",
        { name: "created-by-x", definition },
        { admin: true, run: false, callback: false },
      ],
      ["PUT", "/v1/state-machines/m", { definition }, { admin: true, run: false, callback: false }],
      ["GET", "/v1/state-machines", undefined, { admin: true, run: true, callback: false }],
      ["GET", "/v1/state-machines/m", undefined, { admin: true, run: true, callback: false }],
      [
        "POST",
        "/v1/state-machines/validate",
        { definition },
        { admin: true, run: true, callback: false },
      ],
      ["POST", "/v1/state-machines/m/executions", {}, { admin: true, run: true, callback: false }],
      ["GET", "/v1/executions", undefined, { admin: true, run: true, callback: false }],
      ["GET", `/v1/executions/${id}`, undefined, { admin: true, run: true, callback: false }],
      [
        "GET",
        `/v1/executions/${id}/history`,
        undefined,
        { admin: true, run: true, callback: false },
      ],
      [
        "GET",
        "/v1/activities/nothing/task?wait=0",
        undefined,
        { admin: true, run: false, callback: true },
      ],
    ];
    for (const [method, path, body, allowed] of cases) {
      for (const scope of ["admin", "run", "callback"] as const) {
        const reply = await client.call(method, path, {
          key: KEYS[scope],
          ...(body !== undefined ? { body } : {}),
        });
        const what = `${scope} ${method} ${path}`;
        if (allowed[scope]) {
          expect(reply.status, what).toBeLessThan(400);
        } else {
          expect(reply.status, what).toBe(403);
          expect(reply.body.error, what).toBe("Forbidden");
          expect(reply.body.message, what).toContain(scope);
        }
      }
    }
    // Task-token routes: the callback key gets past auth (then the token is unknown).
    for (const [scope, expected] of [
      ["callback", [400, 404]],
      ["admin", [400, 404]],
      ["run", [403]],
    ] as const) {
      const reply = await client.post("/v1/task-tokens/AAAAAAAAAAAAAAAA/heartbeat", undefined, {
        key: KEYS[scope],
      });
      expect(expected as readonly number[], `${scope} heartbeat`).toContain(reply.status);
    }
    const stop = await client.post(`/v1/executions/${id}/stop`, {}, { key: KEYS.callback });
    expect(stop.status).toBe(403);
  });

  it("a run key stops executions, and its name is recorded as the caller of start and stop", async () => {
    const { client } = stack;
    const started = await client.post(
      "/v1/state-machines/parked/executions",
      {},
      { key: KEYS.run },
    );
    const id = encodeURIComponent(started.body.executionId);
    // Stop once the task is scheduled (see the report: a stop racing the first transition is lost).
    await client.until(async () => {
      const history = await client.get(`/v1/executions/${id}/history`);
      return (
        history.body.items.some((e: { type: string }) => e.type === "ActivityScheduled") ||
        undefined
      );
    });
    expect((await client.post(`/v1/executions/${id}/stop`, {}, { key: KEYS.run })).status).toBe(
      200,
    );
    // The stop is committed by a worker; wait for its event.
    const aborted = await client.until(async () => {
      const history = await client.get(`/v1/executions/${id}/history`);
      return history.body.items.find((e: { type: string }) => e.type === "ExecutionAborted");
    });
    // The key's name next to AWS's own fields (the callback key's is checked in human-approval).
    expect(aborted.executionAbortedEventDetails).toEqual({ callerName: "runner" });
    const history = await client.get(`/v1/executions/${id}/history`);
    const first = history.body.items[0];
    expect(first.type).toBe("ExecutionStarted");
    expect(first.executionStartedEventDetails).toMatchObject({
      input: "{}",
      roleArn: expect.any(String),
      callerName: "runner",
    });
  });

  it("records each caller: the admin key starts, the run key stops with error and cause", async () => {
    const { client } = stack;
    const started = await client.post("/v1/state-machines/parked/executions", {
      input: { n: 1 },
    });
    const id = encodeURIComponent(started.body.executionId);
    await client.until(async () => {
      const history = await client.get(`/v1/executions/${id}/history`);
      return (
        history.body.items.some((e: { type: string }) => e.type === "ActivityScheduled") ||
        undefined
      );
    });
    await client.post(
      `/v1/executions/${id}/stop`,
      { error: "Ops", cause: "no longer needed" },
      {
        key: KEYS.run,
      },
    );
    const events = await client.until(async () => {
      const items = (await client.get(`/v1/executions/${id}/history`)).body.items as {
        type: string;
        [key: string]: unknown;
      }[];
      return items.some((e) => e.type === "ExecutionAborted") ? items : undefined;
    });
    expect(events[0]!.executionStartedEventDetails).toMatchObject({
      input: JSON.stringify({ n: 1 }),
      callerName: "ops",
    });
    expect(events.find((e) => e.type === "ExecutionAborted")!.executionAbortedEventDetails).toEqual(
      { error: "Ops", cause: "no longer needed", callerName: "runner" },
    );
    // Only the events the caller caused carry the name.
    const named = events.filter((e) => JSON.stringify(e).includes("callerName"));
    expect(named.map((e) => e.type)).toEqual(["ExecutionStarted", "ExecutionAborted"]);
  });
});

describe("key configuration", () => {
  it("parses name:scope:secret lists and refuses malformed ones", () => {
    const keys = parseApiKeys("a:admin:0123456789abcdef, b:callback:0123456789abcdef:with:colons");
    expect(keys.map((k) => [k.name, k.scope])).toEqual([
      ["a", "admin"],
      ["b", "callback"],
    ]);
    expect(parseApiKeys(undefined)).toEqual([]);
    expect(parseApiKeys("  ")).toEqual([]);
    expect(() => parseApiKeys("a:root:0123456789abcdef")).toThrow(/scope/);
    expect(() => parseApiKeys("a:admin:short")).toThrow(/16/);
    expect(() => parseApiKeys("a:admin")).toThrow(/name:scope:secret/);
    expect(() => parseApiKeys("a:admin:0123456789abcdef,a:run:0123456789abcdef")).toThrow(/twice/);
  });

  it("without keys binds to 127.0.0.1 only, whatever HOST says, and says so", () => {
    expect(listenAddress([], "0.0.0.0")).toMatchObject({
      host: "127.0.0.1",
      warning: expect.stringContaining("127.0.0.1"),
    });
    expect(listenAddress(parseApiKeys("a:admin:0123456789abcdef"), "0.0.0.0")).toEqual({
      host: "0.0.0.0",
    });
  });

  it("without keys every request may do everything, and no caller is recorded", async () => {
    const open = await startStack({ apiKeys: "" });
    try {
      const created = await open.client.post("/v1/state-machines", { name: "open", definition });
      expect(created.status).toBe(201);
      const run = await open.client.post("/v1/state-machines/open/executions?wait=5", {});
      expect(run.body.status).toBe("SUCCEEDED");
      expect(
        (await open.client.post("/v1/state-machines", { name: "parked", definition: parked }))
          .status,
      ).toBe(201);
      const started = await open.client.post("/v1/state-machines/parked/executions", {});
      const id = encodeURIComponent(started.body.executionId);
      await open.client.until(async () => {
        const history = await open.client.get(`/v1/executions/${id}/history`);
        return (
          history.body.items.some((e: { type: string }) => e.type === "ActivityScheduled") ||
          undefined
        );
      });
      await open.client.post(`/v1/executions/${id}/stop`, {});
      const events = await open.client.until(async () => {
        const items = (await open.client.get(`/v1/executions/${id}/history`)).body.items as {
          type: string;
        }[];
        return items.some((e) => e.type === "ExecutionAborted") ? items : undefined;
      });
      expect(events[0]).toMatchObject({ type: "ExecutionStarted" });
      expect(JSON.stringify(events)).not.toContain("callerName");
    } finally {
      await open.close();
    }
  });
});
