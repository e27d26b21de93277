import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { startStack, type Stack } from "./stack.js";

/**
 * Operation idempotency keys over real HTTP: a payment retried after failures
 * reaches the provider under ONE Idempotency-Key (Stepwise-Attempt 1, 2, 3), and a
 * loop through the state makes a new key per entry.
 */
let stack: Stack;
let provider: FakeServer;
const failuresLeft = new Map<string, number>();

beforeAll(async () => {
  provider = await startFakeServer((request) => {
    const order = String((request.body as { order?: string } | undefined)?.order);
    const left = failuresLeft.get(order) ?? 0;
    if (left > 0) {
      failuresLeft.set(order, left - 1);
      return { status: 503, body: { message: "try again" } };
    }
    return { body: { charged: order } };
  });
  stack = await startStack({ egressAllow: "127.0.0.1" });
  const charge = (next: object) => ({
    Type: "Task",
    Resource: "arn:aws:states:::http:invoke",
    Parameters: {
      ApiEndpoint: `${provider.url}/charges`,
      Method: "POST",
      "RequestBody.$": "$.body",
    },
    Retry: [
      {
        ErrorEquals: ["States.Http.StatusCode.503"],
        IntervalSeconds: 1,
        BackoffRate: 1,
        MaxAttempts: 3,
        MaxDelaySeconds: 1,
      },
    ],
    ResultPath: null,
    ...next,
  });
  await stack.client.post("/v1/state-machines", {
    name: "pay",
    definition: { StartAt: "Charge", States: { Charge: charge({ End: true }) } },
  });
  await stack.client.post("/v1/state-machines", {
    name: "pay-twice",
    definition: {
      StartAt: "Charge",
      States: {
        Charge: charge({ Next: "Again?" }),
        "Again?": {
          Type: "Choice",
          Choices: [{ Variable: "$.round", NumericEquals: 1, Next: "Second" }],
          Default: "Done",
        },
        Second: { Type: "Pass", Result: 2, ResultPath: "$.round", Next: "Charge" },
        Done: { Type: "Succeed" },
      },
    },
  });
});

afterAll(async () => {
  await stack?.close();
  await provider?.close();
});

const callsFor = (order: string) =>
  provider.requests.filter((r) => (r.body as { order?: string } | undefined)?.order === order);

describe("operation keys", () => {
  it("a task that fails twice then succeeds is called three times under one key", async () => {
    failuresLeft.set("o-1", 2);
    const run = await stack.client.post("/v1/state-machines/pay/executions?wait=20", {
      input: { body: { order: "o-1" } },
    });
    expect(run.body.status).toBe("SUCCEEDED");
    const calls = callsFor("o-1");
    expect(calls.map((c) => c.headers["stepwise-attempt"])).toEqual(["1", "2", "3"]);
    const keys = new Set(calls.map((c) => c.headers["idempotency-key"]));
    expect(keys.size).toBe(1);
    const [key] = [...keys];
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    // Each attempt keeps an id of its own, for those who want one per attempt.
    expect(new Set(calls.map((c) => c.headers["x-stepwise-task"])).size).toBe(3);
    // The key is in the history, where an auditor finds what was sent.
    const history = await stack.client.get(
      `/v1/executions/${encodeURIComponent(run.body.executionId)}/history`,
    );
    const scheduled = history.body.items.filter(
      (e: { type: string }) => e.type === "TaskScheduled",
    );
    expect(scheduled).toHaveLength(3);
    for (const event of scheduled) expect(event.taskScheduledEventDetails.operationKey).toBe(key);
  });

  it("a second entry into the state (a loop) gets a new key; another execution too", async () => {
    await stack.client.post("/v1/state-machines/pay-twice/executions?wait=20", {
      input: { body: { order: "o-2" }, round: 1 },
    });
    const keys = callsFor("o-2").map((c) => c.headers["idempotency-key"]);
    expect(keys).toHaveLength(2);
    expect(keys[0]).not.toBe(keys[1]);
    await stack.client.post("/v1/state-machines/pay/executions?wait=20", {
      input: { body: { order: "o-2" } },
    });
    const third = callsFor("o-2").map((c) => c.headers["idempotency-key"]);
    expect(new Set(third).size).toBe(3);
  });
});
