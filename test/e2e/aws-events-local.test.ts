import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exited, spawnBin } from "./processes.js";
import { REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * `events:putEvents` into Stepwise's own bus through the binary
 * (STEPWISE_EVENTS_LOCAL=true, real Redis): a definition written for AWS publishes
 * an event, a rule on its source starts another machine once with it, and the bus
 * lists it; a task retried after its EventBridge half failed publishes its local
 * entry once. A bad value of the variable stops `serve` naming it.
 */
let stack: Stack;
const enc = encodeURIComponent;
const ARN = "arn:aws:states:us-east-1:123456789012:execution";

beforeAll(async () => {
  stack = await startStack({
    egressAllow: "127.0.0.1",
    // EventBridge for other buses: a loopback port nothing listens on.
    expectErrors: /EventBridge|partners|ECONNREFUSED/,
    env: {
      STEPWISE_EVENTS_LOCAL: "true",
      STEPWISE_AWS_ENDPOINT_EVENTBRIDGE: "http://127.0.0.1:9",
      AWS_ACCESS_KEY_ID: "test",
      AWS_SECRET_ACCESS_KEY: "test",
    },
  });
  const machines = [
    { name: "fulfil", definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } } },
    {
      name: "place",
      definition: {
        StartAt: "Publish",
        States: {
          Publish: {
            Type: "Task",
            Resource: "arn:aws:states:::events:putEvents",
            Parameters: {
              Entries: [
                { Source: "orders", DetailType: "OrderPlaced", Detail: { "id.$": "$.id" } },
              ],
            },
            End: true,
          },
        },
      },
    },
    {
      name: "mixed",
      definition: {
        StartAt: "Publish",
        States: {
          Publish: {
            Type: "Task",
            Resource: "arn:aws:states:::events:putEvents",
            Parameters: {
              Entries: [
                { Source: "orders", DetailType: "OrderPlaced", Detail: { "id.$": "$.id" } },
                {
                  Source: "orders",
                  DetailType: "OrderPlaced",
                  Detail: { "id.$": "$.id" },
                  EventBusName: "partners",
                },
              ],
            },
            Retry: [{ ErrorEquals: ["States.ALL"], MaxAttempts: 2, IntervalSeconds: 1 }],
            Catch: [{ ErrorEquals: ["States.ALL"], Next: "Gave up" }],
            End: true,
          },
          "Gave up": { Type: "Pass", End: true },
        },
      },
    },
  ];
  for (const machine of machines) {
    expect((await stack.client.post("/v1/state-machines", machine)).status).toBe(201);
  }
  const rule = await stack.client.post("/v1/rules", {
    name: "placed",
    eventPattern: { source: ["orders"] },
    target: { stateMachine: "fulfil" },
  });
  expect(rule.status).toBe(201);
});

afterAll(async () => {
  await stack?.close();
});

async function finished(machine: string, input: unknown) {
  const started = await stack.client.post(`/v1/state-machines/${machine}/executions`, { input });
  expect(started.status).toBe(201);
  return stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${enc(started.body.executionId)}`);
    return r.body.status === "RUNNING" ? undefined : r.body;
  }, 30_000);
}

async function fulfilments(id: string): Promise<{ executionId: string; input: unknown }[]> {
  const items = (await stack.client.get("/v1/executions?stateMachine=fulfil&limit=1000")).body
    .items as { executionId: string }[];
  const records = await Promise.all(
    items.map(async (e) => (await stack.client.get(`/v1/executions/${enc(e.executionId)}`)).body),
  );
  return records.filter((r) => (r.input as { detail?: { id?: string } }).detail?.id === id);
}

async function busEvents(id: string): Promise<{ id: string; [k: string]: unknown }[]> {
  const items = (await stack.client.get("/v1/events?limit=1000")).body.items;
  return items.filter((e: { detail: { id?: string } }) => e.detail.id === id);
}

describe("events:putEvents with STEPWISE_EVENTS_LOCAL=true", () => {
  it("publishes into Stepwise's bus: the rule starts its machine once with the event", async () => {
    const done = await finished("place", { id: "o-42" });
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output).toEqual({
      Entries: [{ EventId: expect.any(String) }],
      FailedEntryCount: 0,
    });
    const eventId = (done.output as { Entries: { EventId: string }[] }).Entries[0]!.EventId;
    const target = `${ARN}:fulfil:placed-${eventId}`;
    const fulfilled = await stack.client.until(async () => {
      const r = await stack.client.get(`/v1/executions/${enc(target)}`);
      return r.body.status === "SUCCEEDED" ? r.body : undefined;
    }, 30_000);
    expect(fulfilled.input).toMatchObject({
      id: eventId,
      source: "orders",
      "detail-type": "OrderPlaced",
      detail: { id: "o-42" },
      resources: expect.arrayContaining([done.executionId]),
    });
    expect(await fulfilments("o-42")).toHaveLength(1);
    const listed = await busEvents("o-42");
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      id: eventId,
      source: "orders",
      "detail-type": "OrderPlaced",
      detail: { id: "o-42" },
    });
  });

  it("a task retried after its EventBridge entry failed publishes its local entry once", async () => {
    const done = await finished("mixed", { id: "o-77" });
    // Three attempts, each failing on the `partners` bus (nothing answers there).
    expect(done.status).toBe("SUCCEEDED");
    const history = (
      await stack.client.get(`/v1/executions/${enc(done.executionId)}/history?limit=1000`)
    ).body.items as { type: string; [k: string]: unknown }[];
    const failures = history.filter((e) => e.type === "TaskFailed");
    expect(failures).toHaveLength(3);
    expect(JSON.stringify(failures[0])).toContain("EventBridge.SdkClientException");
    expect(await busEvents("o-77")).toHaveLength(1);
    const started = await stack.client.until(async () => {
      const found = await fulfilments("o-77");
      return found.length > 0 ? found : undefined;
    }, 30_000);
    expect(started).toHaveLength(1);
  });
});

describe("a bad STEPWISE_EVENTS_LOCAL", () => {
  it("stops the binary with exit 2 and one line naming the variable", async () => {
    const run = spawnBin(["serve"], { env: { REDIS_URL, STEPWISE_EVENTS_LOCAL: "maybe" } });
    const code = await exited(run.child, 20_000);
    const output = run.output().trim();
    expect({ code, output }).toMatchObject({ code: 2 });
    expect(output.split("\n")).toHaveLength(1);
    expect(output).toContain("STEPWISE_EVENTS_LOCAL='maybe': expected one of true, false");
  });
});
