import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * DELETE /v1/executions/:id on real Redis: an ended execution with Map and Parallel
 * children and an approval leaves no key behind (SCAN of the whole deployment), its
 * index entries go, and its siblings are untouched.
 */
let stack: Stack;
let redis: Redis;
const enc = encodeURIComponent;
const APPROVER = "alice-secret-0123456789abcdef";

beforeAll(async () => {
  stack = await startStack({
    apiKeys: `ops:admin:${KEYS.admin},runner:run:${KEYS.run},alice:approve:${APPROVER}`,
  });
  redis = new Redis(REDIS_URL);
  await stack.client.post("/v1/state-machines", {
    name: "wide",
    definition: {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "arn:aws:states:::stepwise:approval",
          Parameters: { Subject: "Go?", "Details.$": "$" },
          ResultPath: null,
          Next: "Each",
        },
        Each: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemProcessor: {
            StartAt: "Both",
            States: {
              Both: {
                Type: "Parallel",
                Branches: [
                  { StartAt: "L", States: { L: { Type: "Pass", End: true } } },
                  { StartAt: "R", States: { R: { Type: "Pass", End: true } } },
                ],
                End: true,
              },
            },
          },
          End: true,
        },
      },
    },
  });
});

afterAll(async () => {
  redis?.disconnect();
  await stack?.close();
});

async function keysOf(needle: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", `${stack.prefix}*`, "COUNT", 1000);
    cursor = next;
    found.push(...batch.filter((k) => k.includes(needle)));
  } while (cursor !== "0");
  return found;
}

async function runToEnd(name: string): Promise<string> {
  const started = await stack.client.post("/v1/state-machines/wide/executions", {
    name,
    // `note` is large enough to be stored once, by reference (runtime/payloads/history-payloads.ts).
    input: { items: [1, 2, 3], who: "Jane Doe", note: "n".repeat(3_000) },
  });
  const id = started.body.executionId as string;
  const approval = await stack.client.until(async () => {
    const page = await stack.client.get("/v1/approvals?status=PENDING");
    return page.body.items.find((a: { executionId: string }) => a.executionId === id);
  });
  await stack.client.post(
    `/v1/approvals/${approval.approvalId}/decisions`,
    { decision: "APPROVE", envelopeHash: approval.envelopeHash },
    { key: APPROVER },
  );
  await stack.client.until(async () => {
    const record = (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
    return record.status === "SUCCEEDED" ? record : undefined;
  });
  return id;
}

describe("DELETE /v1/executions/:id", () => {
  it("erases an ended execution with its children and approval, and nothing else", async () => {
    const kept = await runToEnd("kept-one");
    const gone = await runToEnd("gone-one");
    const approvalId = (await stack.client.get(`/v1/approvals?status=APPROVED`)).body.items.find(
      (a: { executionId: string }) => a.executionId === gone,
    ).approvalId as string;
    const before = await keysOf(":gone-one");
    // Record, history, journal, payloads: the runs went as they ended
    // (runtime/commit/ended-runs.ts, and a success's root run with its last commit); a
    // purge must still find what a crash left of them.
    expect(before.length).toBeGreaterThanOrEqual(4);
    expect(before.some((key) => key.includes(":p:"))).toBe(true);

    const purged = await stack.client.call("DELETE", `/v1/executions/${enc(gone)}`);
    expect(purged.status).toBe(204);

    expect(await keysOf(":gone-one")).toEqual([]);
    expect(await keysOf(approvalId)).toEqual([]);
    expect((await stack.client.get(`/v1/executions/${enc(gone)}`)).status).toBe(404);
    expect((await stack.client.get(`/v1/approvals/${approvalId}`)).status).toBe(404);
    for (const query of [
      "",
      "?status=SUCCEEDED",
      "?stateMachine=wide",
      "?status=SUCCEEDED&stateMachine=wide",
    ]) {
      const ids = (await stack.client.get(`/v1/executions${query}`)).body.items.map(
        (e: { executionId: string }) => e.executionId,
      );
      expect(ids).toContain(kept);
      expect(ids).not.toContain(gone);
    }
    const approvals = (await stack.client.get("/v1/approvals")).body.items.map(
      (a: { approvalId: string }) => a.approvalId,
    );
    expect(approvals).not.toContain(approvalId);

    // The sibling is whole; the purged name can be used again.
    expect(
      (await stack.client.get(`/v1/executions/${enc(kept)}/history`)).body.items.length,
    ).toBeGreaterThan(10);
    expect((await stack.client.call("DELETE", `/v1/executions/${enc(gone)}`)).status).toBe(404);
    await runToEnd("gone-one");
  });

  it("erases a failed EXPRESS Map Run's join, which has no child runs to name it", async () => {
    await stack.client.post("/v1/state-machines", {
      name: "xfan",
      definition: {
        StartAt: "Fan",
        States: {
          Fan: {
            Type: "Map",
            ItemsPath: "$.items",
            ItemProcessor: {
              ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
              StartAt: "Which",
              States: {
                Which: {
                  Type: "Choice",
                  Choices: [{ Variable: "$", NumericEquals: 3, Next: "Boom" }],
                  Default: "Fine",
                },
                Boom: { Type: "Fail", Error: "Boom" },
                Fine: { Type: "Pass", End: true },
              },
            },
            End: true,
          },
        },
      },
    });
    const started = await stack.client.post("/v1/state-machines/xfan/executions?wait=20", {
      name: "xgone",
      input: { items: [1, 2, 3, 4, 5] },
    });
    expect(started.body.status).toBe("FAILED");
    // What a redrive would need stays while the execution does: the join's inputs and results.
    const before = await keysOf(":xfan:xgone");
    expect(before.some((k) => k.includes(":ji:") || k.includes(":jr:"))).toBe(true);
    const purged = await stack.client.call(
      "DELETE",
      `/v1/executions/${enc(started.body.executionId)}`,
    );
    expect(purged.status).toBe(204);
    expect(await keysOf(":xfan:xgone")).toEqual([]);
  });

  it("refuses a running execution, and keys without the admin scope", async () => {
    const started = await stack.client.post("/v1/state-machines/wide/executions", {
      input: { items: [] },
    });
    const id = started.body.executionId as string;
    const refused = await stack.client.call("DELETE", `/v1/executions/${enc(id)}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe("ExecutionRunning");
    expect((await stack.client.get(`/v1/executions/${enc(id)}`)).status).toBe(200);
    const forbidden = await stack.client.call("DELETE", `/v1/executions/${enc(id)}`, {
      key: KEYS.run,
    });
    expect(forbidden.status).toBe(403);
    await stack.client.post(`/v1/executions/${enc(id)}/stop`, {});
    expect((await stack.client.call("DELETE", `/v1/executions/${enc(id)}`)).status).toBe(204);
  });
});
