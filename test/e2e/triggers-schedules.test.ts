import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { until } from "./processes.js";
import { KEYS, startStack, type Stack } from "./stack.js";

/**
 * Schedules through the binary (`stepwise serve`, real Redis): an at() tick starts
 * exactly one execution named after it, a backfill starts one per tick, bad
 * expressions are refused naming the field, and the `stepwise schedules` CLI.
 * (A rate(1 minute) overlapping a long run, and the tick as the execution's start
 * time: triggers-schedule-catch-up.test.ts, through a StartDate in the past.)
 */
let stack: Stack;
const enc = encodeURIComponent;

beforeAll(async () => {
  stack = await startStack();
  const created = await stack.client.post("/v1/state-machines", {
    name: "nightly",
    definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
  });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await stack?.close();
});

/** `yyyy-mm-ddThh:mm:ss` of an instant, in UTC (at()'s wall time when the zone is UTC). */
function wall(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

async function executionsOf(machine: string): Promise<{ executionId: string; status: string }[]> {
  const reply = await stack.client.get(`/v1/executions?stateMachine=${machine}&limit=1000`);
  expect(reply.status).toBe(200);
  return reply.body.items;
}

describe("at() schedules", () => {
  it("start exactly one execution, named after the tick, with scheduledTime in its input", async () => {
    const tick = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    const created = await stack.client.post("/v1/schedules", {
      name: "once",
      target: { stateMachine: "nightly", input: { report: "daily" } },
      scheduleExpression: `at(${wall(tick)})`,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "once",
      state: "ENABLED",
      overlapPolicy: "SKIP",
      scheduleExpressionTimezone: "UTC",
      nextTick: new Date(tick).toISOString(),
    });
    const name = `once-${new Date(tick).toISOString().replace(/[-:]/g, "").slice(0, 15)}Z`;
    const id = `arn:aws:states:us-east-1:123456789012:execution:nightly:${name}`;
    const record = await until(async () => {
      const r = await stack.client.get(`/v1/executions/${enc(id)}`);
      return r.status === 200 && r.body.status === "SUCCEEDED" ? r.body : undefined;
    });
    // Dated at its tick, however late the worker's loop fired it.
    expect(record.startedAt).toBe(new Date(tick).toISOString());
    expect(record.input).toEqual({ report: "daily", scheduledTime: new Date(tick).toISOString() });
    // The tick is recorded: no next tick, the execution it started.
    const schedule = await until(async () => {
      const s = (await stack.client.get("/v1/schedules/once")).body;
      return s.lastExecution ? s : undefined;
    });
    expect(schedule.lastExecution).toBe(id);
    expect(schedule.nextTick).toBeUndefined();
    expect(
      (await executionsOf("nightly")).filter((e) => e.executionId.includes(":once-")),
    ).toHaveLength(1);
  });
});

describe("backfill", () => {
  it("starts one named execution per tick of the range, and none twice", async () => {
    const created = await stack.client.post("/v1/schedules", {
      name: "hourly",
      target: { stateMachine: "nightly" },
      scheduleExpression: "cron(0 * * * ? *)",
      state: "DISABLED",
    });
    expect(created.status).toBe(201);
    expect(created.body.nextTick).toBeUndefined();
    const range = { from: "2026-01-01T00:00:00Z", to: "2026-01-01T05:00:00Z" };
    const backfill = await stack.client.post("/v1/schedules/hourly/backfill", range);
    expect(backfill.status).toBe(200);
    expect(
      backfill.body.executions.map((e: { executionId: string }) => e.executionId.split(":").at(-1)),
    ).toEqual([
      "hourly-20260101T000000Z",
      "hourly-20260101T010000Z",
      "hourly-20260101T020000Z",
      "hourly-20260101T030000Z",
      "hourly-20260101T040000Z",
    ]);
    expect(backfill.body.executions.every((e: { created: boolean }) => e.created)).toBe(true);
    const again = await stack.client.post("/v1/schedules/hourly/backfill", range);
    expect(again.body.executions.every((e: { created: boolean }) => !e.created)).toBe(true);
    await until(async () => {
      const done = (await executionsOf("nightly")).filter(
        (e) => e.executionId.includes(":hourly-") && e.status === "SUCCEEDED",
      );
      return done.length === 5 ? done : undefined;
    });
  });
});

describe("bad input", () => {
  const base = { target: { stateMachine: "nightly" }, scheduleExpression: "rate(5 minutes)" };
  it.each([
    ["an invalid cron", { scheduleExpression: "cron(0 10 * * * *)" }, "/scheduleExpression"],
    ["a five-field cron", { scheduleExpression: "cron(0 10 * * *)" }, "/scheduleExpression"],
    [
      "an unknown time zone",
      { scheduleExpressionTimezone: "Mars/Olympus" },
      "/scheduleExpressionTimezone",
    ],
    ["an unknown overlap policy", { overlapPolicy: "SOMETIMES" }, "/overlapPolicy"],
    ["an unknown state machine", { target: { stateMachine: "nope" } }, "/target/stateMachine"],
    [
      "EndDate before StartDate",
      { startDate: "2026-02-01T00:00:00Z", endDate: "2026-01-01T00:00:00Z" },
      "/endDate",
    ],
  ])("%s is a 400 naming the field", async (_what, change, path) => {
    const reply = await stack.client.post("/v1/schedules", { name: "bad", ...base, ...change });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe("InvalidRequest");
    expect(reply.body.details[0].path).toBe(path);
  });

  it("a replace and a backfill are checked as a create is, naming the field", async () => {
    const first = await stack.client.post("/v1/schedules", {
      name: "checked",
      ...base,
      state: "DISABLED",
    });
    expect(first.status).toBe(201);
    for (const [change, path] of [
      [{ scheduleExpression: "cron(61 * * * ? *)" }, "/scheduleExpression"],
      [{ scheduleExpressionTimezone: "Europe/Atlantis" }, "/scheduleExpressionTimezone"],
    ] as const) {
      const reply = await stack.client.call("PUT", "/v1/schedules/checked", {
        body: { ...base, ...change },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.details[0].path).toBe(path);
    }
    const backwards = await stack.client.post("/v1/schedules/checked/backfill", {
      from: "2026-01-02T00:00:00Z",
      to: "2026-01-01T00:00:00Z",
    });
    expect(backwards.status).toBe(400);
    expect(backwards.body.details[0].path).toBe("/to");
    expect((await stack.client.call("DELETE", "/v1/schedules/checked")).status).toBe(204);
  });

  it("answers 404 and 409 by name", async () => {
    expect((await stack.client.get("/v1/schedules/missing")).body.error).toBe(
      "ScheduleDoesNotExist",
    );
    const first = await stack.client.post("/v1/schedules", {
      name: "twice",
      ...base,
      state: "DISABLED",
    });
    expect(first.status).toBe(201);
    const second = await stack.client.post("/v1/schedules", { name: "twice", ...base });
    expect(second.status).toBe(409);
    expect(second.body.error).toBe("ScheduleAlreadyExists");
    expect((await stack.client.call("DELETE", "/v1/schedules/twice")).status).toBe(204);
    expect((await stack.client.call("DELETE", "/v1/schedules/twice")).status).toBe(404);
  });

  it("the OpenAPI document covers the trigger routes and what they answer", async () => {
    const doc = await stack.client.get("/docs/json", { key: null });
    const paths = doc.body.paths;
    const answer = (path: string, method: string, code: string) =>
      paths[path]?.[method]?.responses?.[code]?.content?.["application/json"]?.schema;
    for (const path of [
      "/v1/schedules",
      "/v1/schedules/{name}",
      "/v1/schedules/{name}/backfill",
      "/v1/rules",
      "/v1/rules/{name}",
      "/v1/events",
    ])
      expect(Object.keys(paths)).toContain(path);
    expect(answer("/v1/schedules/{name}", "get", "200").properties).toHaveProperty("nextTick");
    expect(answer("/v1/schedules", "post", "201").properties.overlapPolicy.enum).toEqual([
      "SKIP",
      "BUFFER_ONE",
      "ALLOW_ALL",
      "CANCEL_OTHER",
    ]);
    expect(answer("/v1/schedules", "get", "200").properties.items.items.required).toContain(
      "skippedCount",
    );
    expect(answer("/v1/schedules/{name}/backfill", "post", "200").required).toEqual(["executions"]);
    expect(answer("/v1/rules/{name}", "put", "200").properties).toHaveProperty("eventPattern");
    expect(answer("/v1/events", "get", "200").properties.items.items.properties).toHaveProperty(
      "detail-type",
    );
    expect(answer("/v1/events", "post", "200").required).toEqual(["FailedEntryCount", "Entries"]);
  });
});

describe("stepwise schedules", () => {
  async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = "";
    let err = "";
    const code = await main([...args, "--url", stack.url, "--api-key", KEYS.admin], {
      stdout: (t) => (out += t),
      stderr: (t) => (err += t),
    });
    return { code, out, err };
  }

  it("creates, lists, gets and deletes", async () => {
    const created = await cli([
      "schedules",
      "create",
      "weekdays",
      "--machine",
      "nightly",
      "--expression",
      "cron(0 9 ? * MON-FRI *)",
      "--timezone",
      "Europe/Paris",
      "--overlap",
      "BUFFER_ONE",
    ]);
    expect(created.err).toBe("");
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/^weekdays: created, next tick 20\d\d-/);
    const list = await cli(["schedules", "list"]);
    expect(list.out).toMatch(/weekdays\s+ENABLED\s+cron\(0 9 \? \* MON-FRI \*\)/);
    const got = await cli(["schedules", "get", "weekdays", "--json"]);
    expect(JSON.parse(got.out)).toMatchObject({
      overlapPolicy: "BUFFER_ONE",
      scheduleExpressionTimezone: "Europe/Paris",
    });
    const refused = await cli([
      "schedules",
      "create",
      "bad",
      "--machine",
      "nightly",
      "--expression",
      "rate(5 weeks)",
    ]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/400 InvalidRequest: .*scheduleExpression/);
    expect((await cli(["schedules", "delete", "weekdays"])).code).toBe(0);
    expect((await cli(["schedules", "get", "weekdays"])).err).toMatch(/404 ScheduleDoesNotExist/);
  });
});
