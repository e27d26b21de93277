import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { example } from "./examples.js";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { startStack, type Stack } from "./stack.js";

/**
 * definitions/order-saga.asl.json end to end against a fake order service: the happy
 * path, and failures at each step running exactly the compensations they need.
 */
let stack: Stack;
let service: FakeServer;
/** Which endpoint fails, per order id. */
const failAt = new Map<string, string>();

beforeAll(async () => {
  service = await startFakeServer((request) => {
    const order = (request.body as { order?: { id: string } }).order;
    if (order && failAt.get(order.id) === request.path) {
      return { status: 402, body: { message: `refused at ${request.path}` } };
    }
    switch (request.path) {
      case "/inventory/reserve":
        return { body: { reservationId: `r-${order!.id}` } };
      case "/payments/charge":
        return { body: { paymentId: `p-${order!.id}` } };
      case "/shipping/ship":
        return { body: { trackingNumber: `t-${order!.id}` } };
      default:
        return { body: { ok: true } };
    }
  });
  stack = await startStack({ egressAllow: "127.0.0.1" });
  const definition = JSON.parse(await example("order-saga.asl.json"));
  expect((await stack.client.post("/v1/state-machines", { name: "saga", definition })).status).toBe(
    201,
  );
});
afterAll(async () => {
  await stack?.close();
  await service?.close();
});

async function run(orderId: string): Promise<{ record: any; calls: string[] }> {
  const before = service.requests.length;
  const reply = await stack.client.post("/v1/state-machines/saga/executions?wait=20", {
    input: { order: { id: orderId, amount: 30 }, services: service.url },
  });
  expect(reply.status).toBe(201);
  return { record: reply.body, calls: service.requests.slice(before).map((r) => r.path) };
}

describe("order saga", () => {
  it("places the order when every step succeeds", async () => {
    const { record, calls } = await run("o1");
    expect(record).toMatchObject({
      status: "SUCCEEDED",
      output: { status: "PLACED", orderId: "o1", paymentId: "p-o1", trackingNumber: "t-o1" },
    });
    expect(calls).toEqual(["/inventory/reserve", "/payments/charge", "/shipping/ship"]);
    const idempotencyKey = service.requests.at(-1)!.headers["idempotency-key"];
    expect(idempotencyKey).toEqual(expect.any(String));
  });

  it("a failed charge releases the stock, then fails the order", async () => {
    failAt.set("o2", "/payments/charge");
    const { record, calls } = await run("o2");
    expect(record).toMatchObject({ status: "FAILED", error: "OrderFailed" });
    expect(calls).toEqual(["/inventory/reserve", "/payments/charge", "/inventory/release"]);
  });

  it("a failed shipment refunds and releases, in reverse order", async () => {
    failAt.set("o3", "/shipping/ship");
    const { record, calls } = await run("o3");
    expect(record).toMatchObject({ status: "FAILED", error: "OrderFailed" });
    expect(calls).toEqual([
      "/inventory/reserve",
      "/payments/charge",
      "/shipping/ship",
      "/payments/refund",
      "/inventory/release",
    ]);
  });
});
