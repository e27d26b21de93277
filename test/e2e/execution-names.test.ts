import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { startStack, type Stack } from "./stack.js";

/**
 * Execution names: exactly AWS's StartExecution rule (1–80 characters, none of white
 * space, control characters, < > { } [ ] ? * " # % \ ^ | ~ ` $ & , ; : /), and every
 * execution id of a valid name works in `/v1/executions/:id` routes.
 */
let stack: Stack;
let service: FakeServer;
/** The longest state machine name the API allows, so the ids below are the longest possible. */
const LONG_MACHINE = "m".repeat(80);
beforeAll(async () => {
  stack = await startStack({ egressAllow: "127.0.0.1" });
  service = await startFakeServer(() => ({ body: { ok: true } }));
  const { client } = stack;
  const pass = { StartAt: "P", States: { P: { Type: "Pass", End: true } } };
  expect((await client.post("/v1/state-machines", { name: "p", definition: pass })).status).toBe(
    201,
  );
  expect(
    (await client.post("/v1/state-machines", { name: LONG_MACHINE, definition: pass })).status,
  ).toBe(201);
  const call = {
    StartAt: "Call",
    States: {
      Call: {
        Type: "Task",
        Resource: "arn:aws:states:::http:invoke",
        Parameters: { ApiEndpoint: `${service.url}/hook`, Method: "POST" },
        End: true,
      },
    },
  };
  expect((await client.post("/v1/state-machines", { name: "call", definition: call })).status).toBe(
    201,
  );
});
afterAll(async () => {
  await stack?.close();
  await service?.close();
});

const path = (executionId: string) => `/v1/executions/${encodeURIComponent(executionId)}`;

/** Names AWS accepts that letters, digits, `-` and `_` alone would not. */
const ACCEPTED = [
  "a",
  "order.42",
  ".",
  "..",
  "a+b=c@d!'()",
  "café-ß",
  "名前",
  "🚀launch",
  "x".repeat(80),
  "é".repeat(80),
  "🚀".repeat(80), // 80 characters, 160 UTF-16 code units
];

/** One name per character (class) AWS forbids, and the length limits. */
const REFUSED = [
  "",
  "x".repeat(81),
  "🚀".repeat(81),
  "a b",
  "a\tb",
  "a\u00a0b", // no-break space
  "a\u3000b", // ideographic space
  ...'<>{}[]?*"#%\\^|~`$&,;:/'.split("").map((c) => `a${c}b`),
  "a\u0000b",
  "a\u001fb",
  "a\u007fb",
  "a\u0085b",
  "a\u009fb",
  "a\ufffeb",
  "a\uffffb",
  "a\ud800b", // a lone surrogate
  "a\u{10ffff}b",
];

describe("execution names", () => {
  it("accepts every name AWS accepts, and the id works in every execution route", async () => {
    const { client } = stack;
    for (const name of ACCEPTED) {
      const started = await client.post("/v1/state-machines/p/executions?wait=10", {
        name,
        input: { name },
      });
      expect(started.status, name).toBe(201);
      expect(started.body.status, name).toBe("SUCCEEDED");
      const id = started.body.executionId as string;
      expect(id.endsWith(`:p:${name}`), name).toBe(true);

      const described = await client.get(path(id));
      expect(described.status, name).toBe(200);
      expect(described.body).toMatchObject({ executionId: id, name, output: { name } });
      const history = await client.get(`${path(id)}/history`);
      expect(history.status, name).toBe(200);
      expect(history.body.items.at(-1).type).toBe("ExecutionSucceeded");
      // Idempotent start by the same name and input.
      const again = await client.post("/v1/state-machines/p/executions", {
        name,
        input: { name },
      });
      expect(again.status, name).toBe(200);
      expect(again.body.executionId).toBe(id);
    }
    const listed = await client.get("/v1/executions?stateMachine=p&limit=1000");
    const names = (listed.body.items as { name: string }[]).map((e) => e.name);
    for (const name of ACCEPTED) expect(names).toContain(name);
  });

  it("answers 400 InvalidRequest naming the field for every name AWS refuses", async () => {
    for (const name of REFUSED) {
      const reply = await stack.client.post("/v1/state-machines/p/executions", { name });
      expect(reply.status, JSON.stringify(name)).toBe(400);
      expect(reply.body.error).toBe("InvalidRequest");
      expect(reply.body.details[0]).toMatchObject({ location: "body", path: "/name" });
      expect(reply.body.message).toContain("'name' must be 1–80 characters");
    }
    const listed = await stack.client.get("/v1/executions?stateMachine=p&limit=1000");
    const names = (listed.body.items as { name: string }[]).map((e) => e.name);
    for (const name of REFUSED) expect(names).not.toContain(name);
  });

  it("serves ids of the longest state machine and execution names (describe, history, stop)", async () => {
    const { client } = stack;
    const name = "🚀".repeat(80);
    const started = await client.post(`/v1/state-machines/${LONG_MACHINE}/executions?wait=10`, {
      name,
    });
    expect(started.status).toBe(201);
    const id = started.body.executionId as string;
    // `arn:aws:states:us-east-1:123456789012:execution:` (48), machine, `:`, name.
    expect(id.startsWith("arn:aws:states:us-east-1:123456789012:execution:")).toBe(true);
    expect([...id]).toHaveLength(48 + 80 + 1 + 80);
    expect((await client.get(path(id))).body).toMatchObject({ name, status: "SUCCEEDED" });
    expect((await client.get(`${path(id)}/history?reverse=true&limit=1`)).status).toBe(200);
    // A valid id that names nothing is a 404, not a 400; stop of an ended one is a 409.
    const shorter = [...id].slice(0, -1).join("");
    expect((await client.get(path(shorter))).body.error).toBe("ExecutionDoesNotExist");
    expect((await client.post(`${path(id)}/stop`, {})).body.error).toBe("ExecutionNotRunning");
    // Text no execution id can be is refused before any lookup.
    const bad = await client.get(path(`${id}x`));
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toMatchObject({ location: "params", path: "/executionId" });
    expect((await client.get(path("arn:a b"))).status).toBe(400);
  });

  it("passes non-ASCII names to HTTP tasks percent-encoded in the correlation headers", async () => {
    const name = "commande-é-🚀";
    const started = await stack.client.post("/v1/state-machines/call/executions?wait=10", {
      name,
    });
    expect(started.body).toMatchObject({ status: "SUCCEEDED" });
    const request = service.requests.find((r) =>
      String(r.headers["x-stepwise-execution"]).endsWith(encodeURIComponent(name)),
    );
    expect(request).toBeDefined();
    expect(decodeURIComponent(String(request!.headers["x-stepwise-execution"]))).toBe(
      started.body.executionId,
    );
    expect(decodeURIComponent(String(request!.headers["x-stepwise-task"]))).toContain(
      `:call:${name}#`,
    );
  });
});
