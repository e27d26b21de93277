import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

/**
 * GET /v1/executions filters beyond machine and status (what the console's search
 * needs): a name prefix, an error name, a start-time range, each paged with cursors
 * and described in the OpenAPI document.
 */

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
  const { client } = stack;
  expect(
    (
      await client.post("/v1/state-machines", {
        name: "flt-pass",
        definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await client.post("/v1/state-machines", {
        name: "flt-fail",
        definition: {
          StartAt: "F",
          States: { F: { Type: "Fail", Error: "Flt.Broken", Cause: "on purpose" } },
        },
      })
    ).status,
  ).toBe(201);
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

const names = (reply: { body: { items: { name: string }[] } }) =>
  reply.body.items.map((e) => e.name);

describe("GET /v1/executions filters", () => {
  it("by name prefix, error and time range, paging through the filtered list", async () => {
    const { client } = stack;
    const before = new Date(Date.now() - 1000).toISOString();
    for (const name of ["order-1", "order-2", "order-3", "invoice-1"]) {
      const r = await client.post("/v1/state-machines/flt-pass/executions?wait=10", { name });
      expect(r.body.status).toBe("SUCCEEDED");
    }
    const failed = await client.post("/v1/state-machines/flt-fail/executions?wait=10", {
      name: "order-broken",
    });
    expect(failed.body).toMatchObject({ status: "FAILED", error: "Flt.Broken" });
    const late = await client.post("/v1/state-machines/flt-pass/executions?wait=10", {
      name: "late-1",
    });
    // The bounds come from the start times the API gave: from inclusive, to exclusive.
    const middle = late.body.startedAt as string;
    expect(Date.parse(middle)).toBeGreaterThan(Date.parse(failed.body.startedAt));

    const byPrefix = await client.get("/v1/executions?namePrefix=order-");
    expect(byPrefix.status).toBe(200);
    expect(names(byPrefix)).toEqual(["order-broken", "order-3", "order-2", "order-1"]);

    // Pages of one keep their place.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.get(
        `/v1/executions?namePrefix=order-&stateMachine=flt-pass&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      seen.push(...names(page));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(["order-3", "order-2", "order-1"]);

    const byError = await client.get("/v1/executions?error=Flt.Broken");
    expect(names(byError)).toEqual(["order-broken"]);
    expect(byError.body.items[0]).toMatchObject({ status: "FAILED", error: "Flt.Broken" });
    expect(names(await client.get("/v1/executions?error=Flt.Other"))).toEqual([]);

    const inRange = await client.get(
      `/v1/executions?startedAfter=${encodeURIComponent(before)}&startedBefore=${encodeURIComponent(middle)}`,
    );
    expect(names(inRange)).toEqual(["order-broken", "invoice-1", "order-3", "order-2", "order-1"]);
    const after = await client.get(
      `/v1/executions?startedAfter=${encodeURIComponent(middle)}&status=SUCCEEDED`,
    );
    expect(names(after)).toEqual(["late-1"]);

    const bad = await client.get("/v1/executions?startedAfter=yesterday");
    expect(bad.status).toBe(400);

    const openapi = await client.get("/docs/json");
    const params = (openapi.body.paths["/v1/executions"].get.parameters as { name: string }[]).map(
      (p) => p.name,
    );
    expect(params).toEqual(
      expect.arrayContaining(["namePrefix", "error", "startedAfter", "startedBefore"]),
    );
  });
});
