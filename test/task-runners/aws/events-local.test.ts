import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../config/load.js";
import { workerOptions } from "../../../config/service.js";
import { ConfigError } from "../../../config/values.js";
import type { Json } from "../../../engine/core/json.js";
import {
  awsRunner,
  isDefaultBus,
  type AwsRunner,
  type LocalEventEntry,
  type PublishLocal,
} from "../../../task-runners/aws/index.js";
import { parseEgressAllow } from "../../../task-runners/egress.js";
import { TaskError, type TaskRequest } from "../../../task-runners/runner.js";
import { startFakeAws, type FakeAws } from "./servers.js";

/**
 * `events:putEvents` with STEPWISE_EVENTS_LOCAL=true (task-runners/aws/local-events.ts):
 * the default bus's entries go to the injected publisher (the worker's event bus),
 * with idempotency Ids derived from the operation key, the others to EventBridge
 * (here a loopback server answering PutEvents as documented); results in order.
 */
const EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:orders:run-1";
const PUT = "arn:aws:states:::events:putEvents";

let fake: FakeAws;
let runner: AwsRunner;
const published: LocalEventEntry[][] = [];
/** A bus in memory: an Id seen before is answered with its first EventId, as the real one does. */
const seen = new Map<string, string>();
let failBus: Error | undefined;

const publishLocal: PublishLocal = async (entries) => {
  if (failBus) throw failBus;
  published.push(entries);
  return entries.map((e) => {
    const id = seen.get(e.Id) ?? `local-${seen.size + 1}`;
    seen.set(e.Id, id);
    return { EventId: id };
  });
};

beforeAll(async () => {
  fake = await startFakeAws();
  runner = awsRunner({
    region: "us-east-1",
    credentials: { accessKeyId: "x", secretAccessKey: "y" },
    egress: parseEgressAllow("127.0.0.1"),
    endpoints: { EVENTBRIDGE: fake.endpoint },
    publishLocal,
  });
});
afterAll(async () => {
  runner?.close();
  await fake?.close();
});

function request(input: Json, operationKey = "op-1"): TaskRequest {
  return {
    resource: PUT,
    stateName: "Publish",
    taskId: `${EXECUTION}#1`,
    operationKey,
    executionId: EXECUTION,
    attempt: 0,
    input,
    signal: new AbortController().signal,
  };
}

async function failure(promise: Promise<unknown>): Promise<TaskError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof TaskError) return err;
    throw err;
  }
  throw new Error("the task succeeded");
}

describe("events:putEvents into Stepwise's bus", () => {
  it("knows the default bus by absence, name and ARN", () => {
    for (const name of [
      undefined,
      "default",
      "arn:aws:events:us-east-1:123456789012:event-bus/default",
      "arn:aws:events:eu-west-1:999999999999:event-bus/default",
    ]) {
      expect(isDefaultBus(name), String(name)).toBe(true);
    }
    for (const name of [
      "orders",
      "arn:aws:events:us-east-1:123456789012:event-bus/orders",
      "arn:aws:events:us-east-1:123456789012:event-bus/default-2",
    ]) {
      expect(isDefaultBus(name), name).toBe(false);
    }
  });

  it("publishes default-bus entries locally with AWS's result shape, calling no EventBridge", async () => {
    const before = fake.requests.length;
    const result = await runner.run(
      request(
        {
          Entries: [
            { Source: "orders", DetailType: "OrderPlaced", Detail: { id: "o-1" } },
            {
              Source: "orders",
              DetailType: "OrderPaid",
              Detail: '{"id":"o-1"}',
              EventBusName: "arn:aws:events:us-east-1:123456789012:event-bus/default",
              Resources: ["arn:aws:dynamodb:us-east-1:123456789012:table/Orders"],
            },
          ],
        },
        "op-local",
      ),
    );
    expect(result).toEqual({
      Entries: [{ EventId: expect.any(String) }, { EventId: expect.any(String) }],
      FailedEntryCount: 0,
    });
    expect(fake.requests.length).toBe(before);
    const sent = published.at(-1)!;
    expect(sent).toEqual([
      {
        Source: "orders",
        DetailType: "OrderPlaced",
        Detail: '{"id":"o-1"}',
        Resources: ["arn:aws:states:us-east-1:123456789012:stateMachine:orders", EXECUTION],
        Id: expect.stringMatching(/^states-putEvents-[0-9a-f]{64}$/),
      },
      {
        Source: "orders",
        DetailType: "OrderPaid",
        Detail: '{"id":"o-1"}',
        Resources: [
          "arn:aws:dynamodb:us-east-1:123456789012:table/Orders",
          "arn:aws:states:us-east-1:123456789012:stateMachine:orders",
          EXECUTION,
        ],
        Id: expect.any(String),
      },
    ]);
    expect(sent[0]!.Id).not.toBe(sent[1]!.Id);
  });

  it("a retried attempt (same operation key) sends the same Ids: the bus answers the first EventIds", async () => {
    const input = { Entries: [{ Source: "orders", DetailType: "Retried", Detail: { n: 1 } }] };
    const first = (await runner.run(request(input, "op-retry"))) as { Entries: Json[] };
    const again = (await runner.run(request(input, "op-retry"))) as { Entries: Json[] };
    expect(again.Entries).toEqual(first.Entries);
    expect(published.at(-1)![0]!.Id).toBe(published.at(-2)![0]!.Id);
    const other = (await runner.run(request(input, "op-other"))) as { Entries: Json[] };
    expect(other.Entries).not.toEqual(first.Entries);
  });

  it("sends other buses' entries to EventBridge and answers every entry in order", async () => {
    const result = (await runner.run(
      request({
        Entries: [
          { Source: "remote.a", DetailType: "A", Detail: {}, EventBusName: "partners" },
          { Source: "orders", DetailType: "Local", Detail: {} },
          { Source: "remote.b", DetailType: "B", Detail: {}, EventBusName: "partners" },
        ],
      }),
    )) as { Entries: { EventId: string }[]; FailedEntryCount: number };
    expect(result.FailedEntryCount).toBe(0);
    expect(result.Entries).toHaveLength(3);
    expect(published.at(-1)!.map((e) => e.DetailType)).toEqual(["Local"]);
    expect(result.Entries[1]!.EventId).toBe(seen.get(published.at(-1)![0]!.Id));
    const remote = JSON.parse(fake.requests.at(-1)!.body) as { Entries: { Source: string }[] };
    expect(remote.Entries.map((e) => e.Source)).toEqual(["remote.a", "remote.b"]);
  });

  it("an entry the bus cannot take fails the task as a failed entry does on AWS", async () => {
    const failed = await failure(
      runner.run(request({ Entries: [{ Source: "orders", Detail: {} }] }, "op-bad")),
    );
    expect(failed.error).toBe("EventBridge.FailedEntry");
    expect(JSON.parse(failed.cause)).toEqual({
      Entries: [
        { ErrorCode: "InvalidArgument", ErrorMessage: "Parameter DetailType is not valid." },
      ],
      FailedEntryCount: 1,
    });
  });

  it("a bus that cannot take the events fails the task with a retryable error; more than 10 entries are refused", async () => {
    failBus = new Error("Connection is closed.");
    try {
      const err = await failure(
        runner.run(request({ Entries: [{ Source: "o", DetailType: "d", Detail: {} }] })),
      );
      expect(err.error).toBe("EventBridge.InternalException");
      expect(err.cause).toContain("Connection is closed.");
      failBus = Object.assign(new Error("entry 0 is 300000 bytes"), { code: "InvalidRequest" });
      const big = await failure(
        runner.run(request({ Entries: [{ Source: "o", DetailType: "d", Detail: {} }] })),
      );
      expect(big.error).toBe("EventBridge.ValidationException");
    } finally {
      failBus = undefined;
    }
    const many = Array.from({ length: 11 }, () => ({ Source: "o", DetailType: "d", Detail: {} }));
    const err = await failure(runner.run(request({ Entries: many })));
    expect(err.error).toBe("EventBridge.ValidationException");
  });

  it("without publishLocal every entry goes to EventBridge, as before", async () => {
    const plain = awsRunner({
      region: "us-east-1",
      credentials: { accessKeyId: "x", secretAccessKey: "y" },
      egress: parseEgressAllow("127.0.0.1"),
      endpoints: { EVENTBRIDGE: fake.endpoint },
    });
    try {
      const count = published.length;
      const before = fake.requests.length;
      await plain.run(request({ Entries: [{ Source: "o", DetailType: "d", Detail: {} }] }));
      expect(fake.requests.length).toBe(before + 1);
      expect(published.length).toBe(count);
    } finally {
      plain.close();
    }
  });
});

describe("STEPWISE_EVENTS_LOCAL", () => {
  it("is false by default, true when set, and reaches the worker's options", () => {
    expect(loadConfig({}).tasks.eventsLocal).toBe(false);
    expect(workerOptions(loadConfig({})).eventsLocal).toBe(false);
    const on = loadConfig({ STEPWISE_EVENTS_LOCAL: "true" });
    expect(on.tasks.eventsLocal).toBe(true);
    expect(workerOptions(on).eventsLocal).toBe(true);
    expect(loadConfig({ STEPWISE_EVENTS_LOCAL: "false" }).tasks.eventsLocal).toBe(false);
  });

  it("refuses another value, naming the variable", () => {
    expect(() => loadConfig({ STEPWISE_EVENTS_LOCAL: "yes" })).toThrow(ConfigError);
    expect(() => loadConfig({ STEPWISE_EVENTS_LOCAL: "yes" })).toThrow(
      "STEPWISE_EVENTS_LOCAL='yes': expected one of true, false",
    );
  });
});
