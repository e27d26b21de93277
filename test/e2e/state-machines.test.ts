import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

/** State machines over HTTP: create, versions, read, list, validate; JSON and YAML bodies. */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

const pass = (result: unknown) => ({
  StartAt: "P",
  States: { P: { Type: "Pass", Result: result, End: true } },
});

describe("state machines", () => {
  it("creates (201), refuses the same name (409), reads it back with its versions", async () => {
    const { client } = stack;
    const created = await client.post("/v1/state-machines", { name: "hello", definition: pass(1) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "hello", version: 1 });
    expect(created.body.definitionHash).toEqual(expect.any(String));

    const again = await client.post("/v1/state-machines", { name: "hello", definition: pass(2) });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("StateMachineAlreadyExists");

    const got = await client.get("/v1/state-machines/hello");
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ name: "hello", version: 1, latestVersion: 1 });
    expect(got.body.definition).toEqual(pass(1));
    expect(got.body.versions).toHaveLength(1);
  });

  it("PUT publishes a new version; ?version=N reads an old one", async () => {
    const { client } = stack;
    await client.post("/v1/state-machines", { name: "versioned", definition: pass("v1") });
    const updated = await client.put("/v1/state-machines/versioned", { definition: pass("v2") });
    expect(updated.status).toBe(200);
    expect(updated.body.version).toBe(2);

    const latest = await client.get("/v1/state-machines/versioned");
    expect(latest.body).toMatchObject({ version: 2, latestVersion: 2 });
    expect(latest.body.versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    const first = await client.get("/v1/state-machines/versioned?version=1");
    expect(first.body.definition).toEqual(pass("v1"));

    const missing = await client.get("/v1/state-machines/versioned?version=9");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe("StateMachineVersionDoesNotExist");
    const unknown = await client.put("/v1/state-machines/nobody", { definition: pass(0) });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe("StateMachineDoesNotExist");
  });

  it("accepts YAML: as the body (application/yaml, name in the query) and as a string field", async () => {
    const { client } = stack;
    const yaml =
      "StartAt: P\nStates:\n  P:\n    Type: Pass\n    Result: from-yaml\n    End: true\n";
    const asBody = await client.call("POST", "/v1/state-machines?name=yaml-body", {
      raw: yaml,
      contentType: "application/yaml",
    });
    expect(asBody.status).toBe(201);
    const asField = await client.post("/v1/state-machines", {
      name: "yaml-field",
      definition: yaml,
    });
    expect(asField.status).toBe(201);
    const got = await client.get("/v1/state-machines/yaml-body");
    expect(got.body.definition).toEqual(pass("from-yaml"));
    const run = await client.post("/v1/state-machines/yaml-field/executions?wait=10", {});
    expect(run.body).toMatchObject({ status: "SUCCEEDED", output: "from-yaml" });

    const asJsonText = await client.call("PUT", "/v1/state-machines/yaml-body", {
      raw: JSON.stringify(pass("json-text")),
      contentType: "text/plain",
    });
    expect(asJsonText.status).toBe(200);
    expect(asJsonText.body.version).toBe(2);
  });

  it("refuses an invalid definition with 400 and the validator's located diagnostics", async () => {
    const { client } = stack;
    const yaml = "StartAt: A\nStates:\n  A:\n    Type: Pass\n    Next: Nowhere\n";
    const reply = await client.call("POST", "/v1/state-machines?name=broken", {
      raw: yaml,
      contentType: "application/yaml",
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe("InvalidDefinition");
    const target = reply.body.details.find(
      (d: { code: string }) => d.code === "MISSING_TRANSITION_TARGET",
    );
    expect(target).toMatchObject({ path: "/States/A/Next", line: 5, severity: "error" });
    expect(reply.body.message).toMatch(/line \d+/);
    expect((await client.get("/v1/state-machines/broken")).status).toBe(404);
  });

  it("validates without storing: {valid, diagnostics}", async () => {
    const { client } = stack;
    const ok = await client.post("/v1/state-machines/validate", { definition: pass(1) });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ valid: true, diagnostics: [] });
    const bad = await client.post("/v1/state-machines/validate", {
      definition: { StartAt: "X", States: {} },
    });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.diagnostics[0]).toMatchObject({ severity: "error", path: expect.any(String) });
    const text = await client.call("POST", "/v1/state-machines/validate", {
      raw: "StartAt: [unclosed",
      contentType: "application/yaml",
    });
    expect(text.status).toBe(200);
    expect(text.body.valid).toBe(false);
  });

  it("fills ${Name} placeholders from definitionSubstitutions on validate, create and update", async () => {
    const { client } = stack;
    const yaml = "StartAt: W\nStates:\n  W:\n    Type: Wait\n    Seconds: ${Wait}\n    End: true\n";
    const open = await client.post("/v1/state-machines/validate", { definition: yaml });
    expect(open.body).toMatchObject({
      valid: true,
      diagnostics: [{ code: "UNRESOLVED_PLACEHOLDER", severity: "warning", line: 5 }],
    });
    const filled = await client.post("/v1/state-machines/validate", {
      definition: yaml,
      definitionSubstitutions: { Wait: 2 },
    });
    expect(filled.body).toEqual({ valid: true, diagnostics: [] });

    const created = await client.post("/v1/state-machines", {
      name: "templated",
      definition: yaml,
      definitionSubstitutions: { Wait: "1" },
    });
    expect(created.status).toBe(201);
    const updated = await client.put("/v1/state-machines/templated", {
      definition: yaml,
      definitionSubstitutions: { Wait: 3 },
    });
    expect(updated.status).toBe(200);
    const stored = await client.get("/v1/state-machines/templated");
    expect(stored.body.definition.States.W.Seconds).toBe(3);
    const refused = await client.post("/v1/state-machines/validate", {
      definition: yaml,
      definitionSubstitutions: { Wait: { nested: true } },
    });
    expect(refused.status).toBe(400);
  });

  it("lists state machines, paginated", async () => {
    const { client } = stack;
    for (const n of ["list-a", "list-b", "list-c"]) {
      expect(
        (await client.post("/v1/state-machines", { name: n, definition: pass(n) })).status,
      ).toBe(201);
    }
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await client.get(
        `/v1/state-machines?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(reply.status).toBe(200);
      expect(reply.body.items.length).toBeLessThanOrEqual(2);
      names.push(...reply.body.items.map((i: { name: string }) => i.name));
      cursor = reply.body.nextCursor;
      pages++;
    } while (cursor && pages < 50);
    expect(names).toEqual(expect.arrayContaining(["list-a", "list-b", "list-c", "hello"]));
    expect(new Set(names).size).toBe(names.length);
  });
});
