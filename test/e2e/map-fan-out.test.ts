import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { example } from "./examples.js";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { startStack, type Stack } from "./stack.js";

/**
 * definitions/map-fan-out.asl.json end to end: 6 items through an HTTP worker that
 * answers slowly; never more than MaxConcurrency (2) calls in flight; results in item order.
 */
let stack: Stack;
let worker: FakeServer;

beforeAll(async () => {
  worker = await startFakeServer((request) => {
    const { item, index } = request.body as { item: number; index: number };
    // Later items answer sooner, so completion order differs from item order.
    return { body: { index, value: item * 10 }, delayMs: 150 - index * 20 };
  });
  stack = await startStack({ egressAllow: "127.0.0.1" });
  const definition = JSON.parse(await example("map-fan-out.asl.json"));
  expect(
    (await stack.client.post("/v1/state-machines", { name: "fan-out", definition })).status,
  ).toBe(201);
});
afterAll(async () => {
  await stack?.close();
  await worker?.close();
});

describe("Map fan-out", () => {
  it("processes every item with at most 2 in flight and keeps item order", async () => {
    const reply = await stack.client.post("/v1/state-machines/fan-out/executions?wait=30", {
      input: { items: [1, 2, 3, 4, 5, 6], worker: `${worker.url}/work` },
    });
    expect(reply.body).toMatchObject({
      status: "SUCCEEDED",
      output: { count: 6, values: [10, 20, 30, 40, 50, 60] },
    });
    expect(worker.requests).toHaveLength(6);
    // MaxConcurrency is a ceiling: the iterations overlapped, but never more than two.
    expect(worker.maxInFlight).toBe(2);
    const history = await stack.client.get(
      `/v1/executions/${encodeURIComponent(reply.body.executionId)}/history?limit=1000`,
    );
    const types = history.body.items.map((e: { type: string }) => e.type) as string[];
    expect(types.filter((t) => t === "MapIterationStarted")).toHaveLength(6);
    expect(types.filter((t) => t === "MapIterationSucceeded")).toHaveLength(6);
  }, 40_000);
});
