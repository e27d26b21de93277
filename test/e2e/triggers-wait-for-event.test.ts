import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { triggerKeys } from "../../runtime/triggers/trigger-keys.js";
import { until } from "./processes.js";
import { REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * `arn:aws:states:::stepwise:waitForEvent` through the binary: an execution parks
 * until an event on the bus matches its Pattern and Match (here: the payment for
 * its own order id, among 1,000 others), an event sent 2 s before the wait is taken
 * within LookbackSeconds, a Match past the serving thread's slice is evaluated on the
 * evaluation thread, a timeout raises Stepwise.EventTimeout which a Catch
 * handles, one event answers every waiter it matches, and an execution stopped
 * while parked leaves nothing in the waiter indexes.
 */
let stack: Stack;
const enc = encodeURIComponent;

const definition = {
  StartAt: "AwaitPayment",
  States: {
    AwaitPayment: {
      Type: "Task",
      Resource: "arn:aws:states:::stepwise:waitForEvent",
      Parameters: {
        Pattern: { source: ["payments"], "detail-type": ["PaymentReceived"] },
        Match: "$event.detail.orderId = $input.orderId",
        "orderId.$": "$.orderId",
        "TimeoutSeconds.$": "$.timeout",
        "LookbackSeconds.$": "$.lookback",
      },
      Catch: [{ ErrorEquals: ["Stepwise.EventTimeout"], ResultPath: "$.error", Next: "TimedOut" }],
      End: true,
    },
    TimedOut: { Type: "Pass", Parameters: { "timedOut.$": "$.error.Error" }, End: true },
  },
};

beforeAll(async () => {
  stack = await startStack();
  const created = await stack.client.post("/v1/state-machines", {
    name: "await-payment",
    definition,
  });
  expect(created.status).toBe(201);
  // The validator knows the resource: no UNSERVED_RESOURCE warning.
  const checked = await stack.client.post("/v1/state-machines/validate", { definition });
  expect(checked.body).toMatchObject({ valid: true });
  expect(checked.body.diagnostics).toEqual([]);
});

afterAll(async () => {
  await stack?.close();
});

async function start(name: string, input: Record<string, unknown>): Promise<string> {
  const reply = await stack.client.post("/v1/state-machines/await-payment/executions", {
    name,
    input,
  });
  expect(reply.status).toBe(201);
  return reply.body.executionId as string;
}

/** Once the task's runner registered the waiter (the history shows TaskSubmitted). */
async function parked(id: string): Promise<void> {
  await until(async () => {
    const history = (await stack.client.get(`/v1/executions/${enc(id)}/history`)).body.items as {
      type: string;
    }[];
    return history.some((e) => e.type === "TaskSubmitted") ? true : undefined;
  });
}

async function ended(id: string): Promise<any> {
  return until(async () => {
    const r = (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
    return r.status !== "RUNNING" ? r : undefined;
  });
}

function payment(orderId: string) {
  return {
    Source: "payments",
    DetailType: "PaymentReceived",
    Detail: JSON.stringify({ orderId, amount: 42 }),
  };
}

async function publish(entries: ReturnType<typeof payment>[]): Promise<string[]> {
  const reply = await stack.client.post("/v1/events", { Entries: entries });
  expect(reply.status).toBe(200);
  expect(reply.body.FailedEntryCount).toBe(0);
  return reply.body.Entries.map((e: { EventId: string }) => e.EventId);
}

describe("waitForEvent", () => {
  it("takes the event with its order id among 1,000 others", async () => {
    const id = await start("order-137", { orderId: "o-137", timeout: 120, lookback: 0 });
    await parked(id);
    const ids: string[] = [];
    for (let batch = 0; batch < 100; batch++) {
      ids.push(
        ...(await publish(Array.from({ length: 10 }, (_, i) => payment(`o-${batch * 10 + i}`)))),
      );
    }
    const record = await ended(id);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output).toMatchObject({
      id: ids[137],
      source: "payments",
      "detail-type": "PaymentReceived",
      detail: { orderId: "o-137", amount: 42 },
    });
    // The history records which event it was.
    const history = (await stack.client.get(`/v1/executions/${enc(id)}/history`)).body
      .items as any[];
    const succeeded = history.find((e) => e.type === "TaskSucceeded");
    expect(JSON.parse(succeeded.taskSucceededEventDetails.output).id).toBe(ids[137]);
  });

  it("takes an event sent 2 s before the wait began, within LookbackSeconds 10", async () => {
    const [eventId] = await publish([payment("o-early")]);
    // The time between the event and the wait is what is tested.
    await new Promise((r) => setTimeout(r, 2_000));
    const id = await start("order-early", { orderId: "o-early", timeout: 120, lookback: 10 });
    const record = await ended(id);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output.id).toBe(eventId);
  });

  it("times out with Stepwise.EventTimeout, which a Catch handles", async () => {
    const id = await start("order-never", { orderId: "o-never", timeout: 1, lookback: 0 });
    const record = await ended(id);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output).toEqual({ timedOut: "Stepwise.EventTimeout" });
  });

  it("holds Match to the JSONata budget: an expression past it matches nothing", async () => {
    // Past the 500,000-step budget (engine/jsonata/limits.ts): unbounded it would be
    // true after about half a second of the publisher's CPU.
    const hostile = structuredClone(definition);
    hostile.States.AwaitPayment.Parameters.Match = "$count([1..99999].($ * 2 + 1)) > 0";
    const created = await stack.client.post("/v1/state-machines", {
      name: "await-hostile",
      definition: hostile,
    });
    expect(created.status).toBe(201);
    const started = await stack.client.post("/v1/state-machines/await-hostile/executions", {
      input: { orderId: "o-hostile", timeout: 3, lookback: 0 },
    });
    expect(started.status).toBe(201);
    const id = started.body.executionId as string;
    await parked(id);
    await publish([payment("o-hostile")]);
    const record = await ended(id);
    expect(record.output).toEqual({ timedOut: "Stepwise.EventTimeout" });
  });

  it("a Match past the serving thread's slice still matches, on the evaluation thread", async () => {
    // About 40,000 JSONata steps: past the 10,000 the API process evaluates itself
    // (runtime/offload/), well within the 500,000-step budget.
    const heavy = structuredClone(definition);
    heavy.States.AwaitPayment.Parameters.Match =
      "$count([1..20000][$ % 2 = 0]) = 10000 and $event.detail.orderId = $input.orderId";
    const created = await stack.client.post("/v1/state-machines", {
      name: "await-heavy",
      definition: heavy,
    });
    expect(created.status).toBe(201);
    const started = await stack.client.post("/v1/state-machines/await-heavy/executions", {
      input: { orderId: "o-heavy", timeout: 120, lookback: 0 },
    });
    const id = started.body.executionId as string;
    await parked(id);
    const offloaded = async () =>
      Number(
        /^stepwise_steps_offloaded_total (\d+)$/m.exec(
          String((await stack.client.get("/metrics")).body),
        )![1],
      );
    const before = await offloaded();
    const [eventId] = await publish([payment("o-heavy")]);
    const record = await ended(id);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output.id).toBe(eventId);
    expect(await offloaded()).toBeGreaterThan(before);
  });

  it("one event answers every waiter it matches; each takes one event", async () => {
    const a = await start("both-a", { orderId: "o-both", timeout: 120, lookback: 0 });
    const b = await start("both-b", { orderId: "o-both", timeout: 120, lookback: 0 });
    await Promise.all([parked(a), parked(b)]);
    const [first] = await publish([payment("o-both"), payment("o-both")]);
    const [ra, rb] = await Promise.all([ended(a), ended(b)]);
    expect(ra.output.id).toBe(first);
    expect(rb.output.id).toBe(first);
  });
});

describe("an execution that ends while parked", () => {
  it("a stopped execution leaves no waiter in the indexes", async () => {
    const shipping = structuredClone(definition);
    shipping.States.AwaitPayment.Parameters.Pattern = {
      source: ["shipping"],
      "detail-type": ["Shipped"],
    };
    const created = await stack.client.post("/v1/state-machines", {
      name: "await-shipping",
      definition: shipping,
    });
    expect(created.status).toBe(201);
    const started = await stack.client.post("/v1/state-machines/await-shipping/executions", {
      name: "stopped-while-parked",
      input: { orderId: "o-stop", timeout: 3600, lookback: 0 },
    });
    expect(started.status).toBe(201);
    const id = started.body.executionId as string;
    await parked(id);
    const keys = triggerKeys(stack.prefix);
    const index = keys.waiterIndex("shipping", "Shipped");
    const redis = new Redis(REDIS_URL);
    try {
      // Parked: indexed under its pattern's source and detail-type, with a deadline.
      const [token] = await redis.smembers(index);
      expect(token).toBeDefined();
      expect(JSON.parse((await redis.get(keys.waiter(token!)))!).executionId).toBe(id);
      expect(await redis.zscore(keys.waitDeadlines, token!)).not.toBeNull();
      const stopped = await stack.client.post(`/v1/executions/${enc(id)}/stop`, {});
      expect(stopped.status).toBe(200);
      expect((await ended(id)).status).toBe("ABORTED");
      // The workers' loop finds the execution ended and drops its waiter everywhere.
      await until(async () => ((await redis.exists(keys.waiter(token!))) === 0 ? true : undefined));
      expect(await redis.smembers(index)).toEqual([]);
      expect(await redis.zscore(keys.waitDeadlines, token!)).toBeNull();
      expect(await redis.zscore(keys.waitChecks, token!)).toBeNull();
      // An event it would have matched now finds nobody.
      const reply = await stack.client.post("/v1/events", {
        Entries: [
          {
            Source: "shipping",
            DetailType: "Shipped",
            Detail: JSON.stringify({ orderId: "o-stop" }),
          },
        ],
      });
      expect(reply.body.FailedEntryCount).toBe(0);
    } finally {
      redis.disconnect();
    }
  });
});
