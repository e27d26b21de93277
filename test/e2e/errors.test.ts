import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_NAMES, ERRORS } from "../../api/errors.js";
import { startStack, type Stack } from "./stack.js";

/**
 * Hostile and mistaken requests: each answers with its registry error and status,
 * and the service stays healthy with its stored state intact.
 */
let stack: Stack;
const definition = { StartAt: "P", States: { P: { Type: "Pass", End: true } } };

beforeAll(async () => {
  stack = await startStack();
  expect(
    (await stack.client.post("/v1/state-machines", { name: "target", definition })).status,
  ).toBe(201);
});
afterAll(async () => {
  await stack?.close();
});

function expectError(reply: { status: number; body: any }, status: number, error: string): void {
  expect({ status: reply.status, error: reply.body?.error }).toEqual({ status, error });
  expect(reply.body.message).toEqual(expect.any(String));
  expect(Array.isArray(reply.body.details)).toBe(true);
  expect(ERRORS[error as keyof typeof ERRORS]?.status).toBe(status);
}

describe("error answers", () => {
  it("400 InvalidRequest names the field with a JSON pointer", async () => {
    const { client } = stack;
    const badName = await client.post("/v1/state-machines", { name: "a b", definition });
    expectError(badName, 400, "InvalidRequest");
    expect(badName.body.message).toContain("name");
    expect(badName.body.details[0]).toMatchObject({ location: "body", path: "/name" });

    const missing = await client.post("/v1/state-machines", { definition });
    expectError(missing, 400, "InvalidRequest");
    expect(missing.body.details[0].path).toBe("/name");

    const unknownField = await client.post("/v1/state-machines/target/executions", { inputs: {} });
    expectError(unknownField, 400, "InvalidRequest");
    expect(unknownField.body.details[0].path).toBe("/inputs");

    const wrongType = await client.post("/v1/state-machines", { name: 12, definition });
    expectError(wrongType, 400, "InvalidRequest");

    expectError(await client.get("/v1/executions?limit=0"), 400, "InvalidRequest");
    expectError(await client.get("/v1/executions?status=DONE"), 400, "InvalidRequest");
    expectError(
      await client.post("/v1/state-machines/target/executions?wait=99999", {}),
      400,
      "InvalidRequest",
    );
    expectError(await client.get("/v1/executions/%E0%A4%A"), 400, "InvalidRequest");
  });

  it("refuses path traversal and odd names instead of looking them up", async () => {
    const { client } = stack;
    for (const name of [
      "..",
      ".",
      "..%2F..%2Fetc%2Fpasswd",
      "a%00b",
      "x".repeat(81),
      "%F0%9F%91%8B",
    ]) {
      const reply = await client.get(`/v1/state-machines/${name}`);
      expect([400, 404]).toContain(reply.status);
      expect(reply.body.error).toEqual(expect.any(String));
    }
    expectError(await client.get("/v1/state-machines/..%2F..%2Fetc"), 400, "InvalidRequest");
    expectError(
      await client.post("/v1/state-machines", { name: "../x", definition }),
      400,
      "InvalidRequest",
    );
  });

  it("400 InvalidJson: malformed JSON, deep nesting, out-of-range numbers, __proto__", async () => {
    const { client } = stack;
    const post = (raw: string) =>
      client.call("POST", "/v1/state-machines/target/executions", { raw });
    expectError(await post('{"input": '), 400, "InvalidJson");
    expectError(await post("{'input': 1}"), 400, "InvalidJson");
    expectError(
      await post(`{"input": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`),
      400,
      "InvalidJson",
    );
    expectError(await post(`{"input": {"n": 1e400}}`), 400, "InvalidJson");
    expectError(await post(`{"input": {"__proto__": {"admin": true}}}`), 400, "InvalidJson");
    const bytes = await client.call("POST", "/v1/state-machines/target/executions", {
      raw: new Uint8Array([0xff, 0xfe, 0x00, 0x7b]),
    });
    expect(bytes.status).toBe(400);
  });

  it("400 InvalidDefinition carries diagnostics", async () => {
    const reply = await stack.client.post("/v1/state-machines", {
      name: "bad",
      definition: { StartAt: "A", States: { A: { Type: "Nope" } } },
    });
    expectError(reply, 400, "InvalidDefinition");
    expect(reply.body.details[0]).toMatchObject({
      code: expect.any(String),
      path: expect.any(String),
    });
  });

  it("404 for unknown routes, state machines and executions", async () => {
    const { client } = stack;
    expectError(await client.get("/v1/nothing-here"), 404, "RouteNotFound");
    expectError(await client.call("PATCH", "/v1/state-machines/target"), 404, "RouteNotFound");
    expectError(await client.get("/v1/state-machines/ghost"), 404, "StateMachineDoesNotExist");
    expectError(
      await client.post("/v1/state-machines/ghost/executions", {}),
      404,
      "StateMachineDoesNotExist",
    );
    expectError(await client.get("/v1/executions/ghost-execution"), 404, "ExecutionDoesNotExist");
    expectError(
      await client.get("/v1/executions/ghost-execution/history"),
      404,
      "ExecutionDoesNotExist",
    );
    expectError(
      await client.post("/v1/executions/ghost-execution/stop", {}),
      404,
      "ExecutionDoesNotExist",
    );
  });

  it("409 on conflicts", async () => {
    const { client } = stack;
    expectError(
      await client.post("/v1/state-machines", { name: "target", definition }),
      409,
      "StateMachineAlreadyExists",
    );
    await client.post("/v1/state-machines/target/executions", { name: "dup", input: { a: 1 } });
    expectError(
      await client.post("/v1/state-machines/target/executions", { name: "dup", input: { a: 2 } }),
      409,
      "ExecutionAlreadyExists",
    );
  });

  it("413 for bodies over 1 MiB; 413 States.DataLimitExceeded for inputs over 256 KiB", async () => {
    const { client } = stack;
    const huge = await client.post("/v1/state-machines/target/executions", {
      input: "x".repeat(1100 * 1024),
    });
    expectError(huge, 413, "PayloadTooLarge");
    const big = await client.post("/v1/state-machines/target/executions", {
      input: "x".repeat(300 * 1024),
    });
    expectError(big, 413, "States.DataLimitExceeded");
    expect(big.body.details[0].path).toBe("/input");
    const justUnder = await client.post("/v1/state-machines/target/executions?wait=10", {
      input: "x".repeat(250 * 1024),
    });
    expect(justUnder.status).toBe(201);
    expect(justUnder.body.status).toBe("SUCCEEDED");
    const bigOutput = await client.post("/v1/task-tokens/AAAA/success", {
      output: "x".repeat(300 * 1024),
    });
    expectError(bigOutput, 413, "States.DataLimitExceeded");
  });

  it("415 for content types other than JSON and YAML (and YAML where only JSON is read)", async () => {
    const { client } = stack;
    expectError(
      await client.call("POST", "/v1/state-machines", {
        raw: "<a/>",
        contentType: "application/xml",
      }),
      415,
      "UnsupportedMediaType",
    );
    expectError(
      await client.call("POST", "/v1/state-machines/target/executions", {
        raw: "input: 1",
        contentType: "application/yaml",
      }),
      415,
      "UnsupportedMediaType",
    );
    expectError(
      await client.call("POST", "/v1/state-machines", {
        raw: "a=b",
        contentType: "application/x-www-form-urlencoded",
      }),
      415,
      "UnsupportedMediaType",
    );
  });

  it("stays healthy and keeps its state after all of the above", async () => {
    const { client } = stack;
    expect((await client.get("/health")).status).toBe(200);
    const sm = await client.get("/v1/state-machines/target");
    expect(sm.body).toMatchObject({ version: 1, definition });
    const run = await client.post("/v1/state-machines/target/executions?wait=10", {
      input: { ok: 1 },
    });
    expect(run.body).toMatchObject({ status: "SUCCEEDED", output: { ok: 1 } });
  });
});

describe("the error registry is documented", () => {
  it("every entry appears in the OpenAPI document and in api/README.md", async () => {
    const doc = await stack.client.get("/docs/json", { key: null });
    expect(doc.status).toBe(200);
    const documented = (doc.body["x-errors"] as { name: string; status: number }[]).map(
      (e) => e.name,
    );
    const enumerated = doc.body.components.schemas.Error.properties.error.enum as string[];
    const readme = await readFile(
      fileURLToPath(new URL("../../api/README.md", import.meta.url)),
      "utf8",
    );
    for (const name of ERROR_NAMES) {
      expect(documented).toContain(name);
      expect(enumerated).toContain(name);
      // A row of the errors table (prettier pads the cells).
      const row = new RegExp(
        `\\|\\s*\`${name.replace(/\./g, "\\.")}\`\\s*\\|\\s*${ERRORS[name].status}\\s*\\|`,
      );
      expect(readme, name).toMatch(row);
    }
  });

  it("documents every route of the REST table", async () => {
    const doc = await stack.client.get("/docs/json", { key: null });
    const paths = doc.body.paths as Record<string, Record<string, unknown>>;
    const expected: [string, string][] = [
      ["post", "/v1/state-machines/validate"],
      ["post", "/v1/state-machines"],
      ["put", "/v1/state-machines/{name}"],
      ["get", "/v1/state-machines"],
      ["get", "/v1/state-machines/{name}"],
      ["post", "/v1/state-machines/{name}/executions"],
      ["get", "/v1/executions"],
      ["get", "/v1/executions/{executionId}"],
      ["get", "/v1/executions/{executionId}/history"],
      ["post", "/v1/executions/{executionId}/stop"],
      ["post", "/v1/task-tokens/{token}/success"],
      ["post", "/v1/task-tokens/{token}/failure"],
      ["post", "/v1/task-tokens/{token}/heartbeat"],
      ["get", "/v1/activities/{name}/task"],
      ["get", "/health"],
      ["get", "/metrics"],
    ];
    for (const [method, path] of expected)
      expect(paths[path]?.[method], `${method} ${path}`).toBeDefined();
    const html = await stack.client.get("/docs", { key: null });
    expect(html.status).toBe(200);
    expect(html.text).toContain("/v1/task-tokens/{token}/success");
  });
});
