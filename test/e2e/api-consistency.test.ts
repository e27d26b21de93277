import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

/**
 * The REST API reads what the CLI reads: strict JSON with located errors; unknown
 * query parameters refused; nearly-right bodies answered with the right shape; an
 * unchanged PUT that changes nothing.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

const pass = { StartAt: "P", States: { P: { Type: "Pass", End: true } } };

describe("strict JSON", () => {
  it("a trailing comma in a JSON body is a 400 naming line and column", async () => {
    const reply = await stack.client.call("POST", "/v1/state-machines", {
      raw: '{\n  "name": "comma",\n  "definition": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}},\n}',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe("InvalidJson");
    expect(reply.body.message).toMatch(/at line 4, column 1$/);
    expect(reply.body.details[0]).toMatchObject({ location: "body", line: 4, column: 1 });
  });

  it("a definition string that looks like JSON is read as JSON, as stepwise validate reads a .json file", async () => {
    const reply = await stack.client.post("/v1/state-machines", {
      name: "comma-text",
      definition: '{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true},}}',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe("InvalidDefinition");
    expect(reply.body.details[0]).toMatchObject({ line: 1 });
    // YAML stays welcome where it says it is YAML.
    const yaml = await stack.client.call("POST", "/v1/state-machines?name=flow-yaml", {
      raw: "{StartAt: P, States: {P: {Type: Pass, End: true}}}",
      contentType: "application/yaml",
    });
    expect(yaml.status).toBe(201);
  });
});

describe("query parameters", () => {
  it.each([
    ["GET", "/v1/executions?stateMachne=x", "stateMachne"],
    ["GET", "/v1/state-machines?bogus=1", "bogus"],
    ["POST", "/v1/state-machines/x/executions?wiat=5", "wiat"],
    ["GET", "/v1/executions/x/history?revers=true", "revers"],
  ])("%s %s is a 400 naming the parameter", async (method, path, name) => {
    const reply = await stack.client.call(method, path, method === "POST" ? { body: {} } : {});
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe("InvalidRequest");
    expect(reply.body.message).toContain(`'${name}' is not a known field`);
    expect(reply.body.details[0]).toMatchObject({ location: "querystring", path: `/${name}` });
  });

  it("a known one still works", async () => {
    expect((await stack.client.get("/v1/state-machines?limit=5")).status).toBe(200);
  });
});

describe("the right shape, shown", () => {
  it("a bare definition as the create body", async () => {
    const reply = await stack.client.post("/v1/state-machines", pass);
    expect(reply.status).toBe(400);
    expect(reply.body.message).toContain(
      'send it wrapped: {"name": "<name>", "definition": {"StartAt": …, "States": …}}',
    );
  });

  it("a bare definition as the PUT and validate bodies", async () => {
    for (const [method, path] of [
      ["PUT", "/v1/state-machines/anything"],
      ["POST", "/v1/state-machines/validate"],
    ] as const) {
      const reply = await stack.client.call(method, path, { body: pass });
      expect(reply.status).toBe(400);
      expect(reply.body.message).toContain('{"definition": {"StartAt": …, "States": …}}');
    }
  });

  it("a start body without input shows it wrapped in input", async () => {
    await stack.client.post("/v1/state-machines", { name: "shape", definition: pass });
    const reply = await stack.client.post("/v1/state-machines/shape/executions", { who: "x" });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toContain(`{"input": {"who":"x"}}`);
    expect(reply.body.details[0]).toMatchObject({ path: "/who" });
  });

  it("a string input stays a string (the native API takes JSON values)", async () => {
    const reply = await stack.client.post("/v1/state-machines/shape/executions?wait=10", {
      input: '{"a":1}',
    });
    expect(reply.body).toMatchObject({ status: "SUCCEEDED", output: '{"a":1}' });
  });
});

describe("PUT", () => {
  it("an identical definition returns the existing version (created: false)", async () => {
    await stack.client.post("/v1/state-machines", { name: "same", definition: pass });
    const same = await stack.client.put("/v1/state-machines/same", { definition: pass });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ name: "same", version: 1, created: false });
    const changed = await stack.client.put("/v1/state-machines/same", {
      definition: { ...pass, Comment: "v2" },
    });
    expect(changed.body).toMatchObject({ version: 2, created: true });
    const versions = (await stack.client.get("/v1/state-machines/same")).body.versions;
    expect(versions).toHaveLength(2);
  });
});
