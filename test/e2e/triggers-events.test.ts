import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { createRedisRuntime, type RedisRuntime } from "../../runtime/runtime.js";
import { until } from "./processes.js";
import { KEYS, REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * The event bus and rules through the binary (`stepwise serve`, real Redis):
 * PutEvents-shaped events, a rule starting its machine for a matching event and not
 * for a near miss, idempotent entry Ids, bad input refused naming the field, and an
 * event whose delivery was interrupted delivered by a worker from the outbox.
 */
let stack: Stack;
const enc = encodeURIComponent;
const ARN = "arn:aws:states:us-east-1:123456789012:execution";

beforeAll(async () => {
  stack = await startStack();
  const created = await stack.client.post("/v1/state-machines", {
    name: "fulfil",
    definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
  });
  expect(created.status).toBe(201);
  const rule = await stack.client.post("/v1/rules", {
    name: "big-orders",
    eventPattern: {
      source: ["shop"],
      "detail-type": ["OrderPlaced"],
      detail: { amount: [{ numeric: [">", 100] }], country: [{ "anything-but": ["XX"] }] },
    },
    target: { stateMachine: "fulfil", inputPath: "$.detail" },
  });
  expect(rule.status).toBe(201);
});

afterAll(async () => {
  await stack?.close();
});

function entry(detail: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { Source: "shop", DetailType: "OrderPlaced", Detail: JSON.stringify(detail), ...extra };
}

async function startedBy(rule: string): Promise<{ executionId: string; status: string }[]> {
  const items = (await stack.client.get("/v1/executions?stateMachine=fulfil&limit=1000")).body
    .items;
  return items.filter((e: { executionId: string }) => e.executionId.includes(`:fulfil:${rule}-`));
}

describe("rules", () => {
  it("start the target for a matching event, not for a near miss", async () => {
    const put = await stack.client.post("/v1/events", {
      Entries: [
        entry({ order: "o-1", amount: 250, country: "FR" }),
        entry({ order: "o-2", amount: 100, country: "FR" }), // amount not > 100
        entry({ order: "o-3", amount: 250, country: "XX" }), // anything-but
        entry({ order: "o-4", amount: 250, country: "FR" }, { Source: "shop-test" }), // source
      ],
    });
    expect(put.status).toBe(200);
    expect(put.body.FailedEntryCount).toBe(0);
    const [first] = put.body.Entries as { EventId: string }[];
    const id = `${ARN}:fulfil:big-orders-${first!.EventId}`;
    const record = await until(async () => {
      const r = await stack.client.get(`/v1/executions/${enc(id)}`);
      return r.body.status === "SUCCEEDED" ? r.body : undefined;
    });
    expect(record.input).toEqual({ order: "o-1", amount: 250, country: "FR" });
    // Deliveries happen before PutEvents answers: the near misses started nothing.
    expect(await startedBy("big-orders")).toHaveLength(1);
  });

  it("an entry Id sent twice is one event and starts one execution", async () => {
    const send = () =>
      stack.client.post("/v1/events", {
        Entries: [
          entry({ order: "o-9", amount: 500, country: "DE" }, { Id: "webhook-delivery-9" }),
        ],
      });
    const first = await send();
    const second = await send();
    expect(second.body.Entries[0].EventId).toBe(first.body.Entries[0].EventId);
    const eventId = first.body.Entries[0].EventId as string;
    const executions = (await startedBy("big-orders")).filter((e) =>
      e.executionId.endsWith(eventId),
    );
    expect(executions).toHaveLength(1);
    const listed = (await stack.client.get("/v1/events?limit=1000")).body.items.filter(
      (e: { detail: { order?: string } }) => e.detail.order === "o-9",
    );
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: eventId, source: "shop", "detail-type": "OrderPlaced" });
  });

  it("a disabled rule starts nothing; rules are listed and replaced", async () => {
    const rule = (await stack.client.get("/v1/rules/big-orders")).body;
    const replaced = await stack.client.put("/v1/rules/big-orders", {
      eventPattern: rule.eventPattern,
      target: rule.target,
      state: "DISABLED",
    });
    expect(replaced.status).toBe(200);
    const before = (await startedBy("big-orders")).length;
    await stack.client.post("/v1/events", {
      Entries: [entry({ order: "o-5", amount: 900, country: "FR" })],
    });
    expect(await startedBy("big-orders")).toHaveLength(before);
    const list = (await stack.client.get("/v1/rules")).body.items;
    expect(list.map((r: { name: string }) => r.name)).toContain("big-orders");
    await stack.client.put("/v1/rules/big-orders", {
      ...replaced.body,
      name: undefined,
      createdAt: undefined,
      updatedAt: undefined,
      state: "ENABLED",
    });
    expect((await stack.client.get("/v1/rules/big-orders")).body.state).toBe("ENABLED");
  });
});

describe("bad input", () => {
  it("a malformed pattern is a 400 naming the field", async () => {
    const reply = await stack.client.post("/v1/rules", {
      name: "bad",
      eventPattern: { detail: { amount: [{ numeric: [">", "one hundred"] }] } },
      target: { stateMachine: "fulfil" },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details[0].path).toBe("/eventPattern/detail/amount/0/numeric");
  });

  it("a replace with a malformed pattern is a 400 naming the field", async () => {
    const created = await stack.client.post("/v1/rules", {
      name: "replaced-badly",
      eventPattern: { source: ["shop"] },
      target: { stateMachine: "fulfil" },
    });
    expect(created.status).toBe(201);
    const reply = await stack.client.call("PUT", "/v1/rules/replaced-badly", {
      body: { eventPattern: { source: "shop" }, target: { stateMachine: "fulfil" } },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details[0].path).toBe("/eventPattern/source");
    expect((await stack.client.call("DELETE", "/v1/rules/replaced-badly")).status).toBe(204);
  });

  it("an event over 256 KiB is a 400 naming the entry", async () => {
    const reply = await stack.client.post("/v1/events", {
      Entries: [entry({ order: "small" }), entry({ blob: "x".repeat(270 * 1024) })],
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details[0].path).toBe("/Entries/1");
    expect(reply.body.message).toMatch(/256 KiB/);
  });

  it("more than 10 entries is a 400; a Detail that is not a JSON object fails its entry only", async () => {
    const eleven = await stack.client.post("/v1/events", {
      Entries: Array.from({ length: 11 }, () => entry({})),
    });
    expect(eleven.status).toBe(400);
    expect(eleven.body.details[0].path).toBe("/Entries");
    const mixed = await stack.client.post("/v1/events", {
      Entries: [
        { Source: "shop", DetailType: "OrderPlaced", Detail: "not json" },
        entry({ order: "ok" }),
      ],
    });
    expect(mixed.status).toBe(200);
    expect(mixed.body.FailedEntryCount).toBe(1);
    expect(mixed.body.Entries[0]).toEqual({
      ErrorCode: "MalformedDetail",
      ErrorMessage: "Detail is not valid JSON",
    });
    expect(mixed.body.Entries[1].EventId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("the outbox", () => {
  let runtime: RedisRuntime;
  afterAll(async () => runtime?.close());

  it("an event stored but never delivered (its API died) is delivered by a worker", async () => {
    // What an API process that died right after storing leaves: the event and its
    // outbox entry, written by the same code, with no delivery.
    runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix: stack.prefix });
    const { accepted } = await runtime.triggers.bus.put([
      entry({ order: "o-lost", amount: 300, country: "FR" }),
    ]);
    const eventId = accepted[0]!;
    const id = `${ARN}:fulfil:big-orders-${eventId}`;
    const record = await until(async () => {
      const r = await stack.client.get(`/v1/executions/${enc(id)}`);
      return r.body.status === "SUCCEEDED" ? r.body : undefined;
    });
    expect(record.input).toMatchObject({ order: "o-lost" });
  });
});

describe("stepwise rules", () => {
  it("creates from a file, lists, gets and deletes", async () => {
    const cli = async (args: string[]) => {
      let out = "";
      let err = "";
      const code = await main([...args, "--url", stack.url, "--api-key", KEYS.admin], {
        stdout: (t) => (out += t),
        stderr: (t) => (err += t),
      });
      return { code, out, err };
    };
    const dir = mkdtempSync(join(tmpdir(), "stepwise-rules-"));
    try {
      const file = join(dir, "rule.json");
      writeFileSync(
        file,
        JSON.stringify({ eventPattern: { source: ["crm"] }, target: { stateMachine: "fulfil" } }),
      );
      expect(await cli(["rules", "create", "crm-events", file])).toMatchObject({
        code: 0,
        out: "crm-events: created\n",
      });
      expect((await cli(["rules", "list"])).out).toMatch(
        /crm-events\s+ENABLED\s+fulfil\s+\{"source":\["crm"\]\}/,
      );
      expect(JSON.parse((await cli(["rules", "get", "crm-events"])).out).target.stateMachine).toBe(
        "fulfil",
      );
      expect((await cli(["rules", "delete", "crm-events"])).code).toBe(0);
      expect((await cli(["rules", "get", "crm-events"])).err).toMatch(/404 RuleDoesNotExist/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
