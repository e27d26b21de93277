import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, startStack, type Stack } from "./stack.js";

/** POST /v1/executions/:id/restart on real Redis: same version, same input, linked. */
let stack: Stack;
const enc = encodeURIComponent;

beforeAll(async () => {
  stack = await startStack();
  await stack.client.post("/v1/state-machines", {
    name: "greet",
    definition: {
      StartAt: "Say",
      States: { Say: { Type: "Pass", Parameters: { "v1.$": "$.who" }, End: true } },
    },
  });
});

afterAll(async () => {
  await stack?.close();
});

describe("restart", () => {
  it("starts the same version with the same input, linked to its source", async () => {
    const first = await stack.client.post("/v1/state-machines/greet/executions?wait=10", {
      input: { who: "Ada" },
    });
    expect(first.body.output).toEqual({ v1: "Ada" });
    // A new version meanwhile: the restart still runs the source's.
    await stack.client.put("/v1/state-machines/greet", {
      definition: {
        StartAt: "Say",
        States: { Say: { Type: "Pass", Parameters: { "v2.$": "$.who" }, End: true } },
      },
    });
    const source = first.body.executionId as string;
    const restarted = await stack.client.post(
      `/v1/executions/${enc(source)}/restart`,
      { name: "again-1" },
      { key: KEYS.run },
    );
    expect(restarted.status).toBe(201);
    expect(restarted.body.restartedFrom).toBe(source);
    const id = restarted.body.executionId as string;
    expect(id).toMatch(/:greet:again-1$/);
    const record = await stack.client.until(async () => {
      const r = (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
      return r.status === "SUCCEEDED" ? r : undefined;
    });
    expect(record).toMatchObject({
      version: 1,
      input: { who: "Ada" },
      output: { v1: "Ada" },
      restartedFrom: source,
    });
    const started = (await stack.client.get(`/v1/executions/${enc(id)}/history`)).body.items[0];
    expect(started.executionStartedEventDetails).toMatchObject({
      restartedFrom: source,
      callerName: "runner",
    });
    // The same name again is the same restart (idempotent start); the source is untouched.
    const again = await stack.client.post(`/v1/executions/${enc(source)}/restart`, {
      name: "again-1",
    });
    expect(again.status).toBe(200);
    expect(again.body.executionId).toBe(id);
    expect((await stack.client.get(`/v1/executions/${enc(source)}`)).body.restartedFrom).toBe(
      undefined,
    );
  });

  it("answers 404 for an unknown execution and 403 without the scope", async () => {
    const unknown = await stack.client.post(
      `/v1/executions/${enc("arn:aws:states:us-east-1:123456789012:execution:greet:nope")}/restart`,
      {},
    );
    expect(unknown.status).toBe(404);
    const first = await stack.client.post("/v1/state-machines/greet/executions?wait=10", {
      input: { who: "Bo" },
    });
    const denied = await stack.client.post(
      `/v1/executions/${enc(first.body.executionId)}/restart`,
      {},
      { key: KEYS.callback },
    );
    expect(denied.status).toBe(403);
  });
});
