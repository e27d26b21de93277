import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../../runtime/store/canonical.js";
import { API_KEYS, REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * Issue 44, findings 3 and 4, through `stepwise serve`: a stop and the final
 * decision racing over HTTP always leave the approval and the execution agreeing;
 * a record changed in Redis refuses decisions (the hash is checked against the
 * envelope the history recorded at ApprovalRequested) and the history is unchanged.
 */
const ALICE = "alice-secret-0123456789abcdef";
const alice = { key: ALICE };

let stack: Stack;
let redis: Redis;

beforeAll(async () => {
  stack = await startStack({
    apiKeys: `${API_KEYS},alice:approve:${ALICE}`,
    approverGroups: "alice=finance",
  });
  redis = new Redis(REDIS_URL);
  const created = await stack.client.post("/v1/state-machines", {
    name: "pay",
    definition: {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "arn:aws:states:::stepwise:approval",
          Parameters: { Subject: "Pay", "Details.$": "$", Approvers: ["finance"] },
          Next: "Later",
        },
        // Still RUNNING after the decision: a stop after it aborts the execution.
        Later: { Type: "Wait", Seconds: 600, End: true },
      },
    },
  });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  redis?.disconnect();
  await stack?.close();
});

const path = (executionId: string) => `/v1/executions/${encodeURIComponent(executionId)}`;

async function start(input: object): Promise<string> {
  const started = await stack.client.post("/v1/state-machines/pay/executions", { input });
  expect(started.status).toBe(201);
  return started.body.executionId as string;
}

async function approvalOf(executionId: string): Promise<any> {
  const approvalId = await stack.client.until(async () => {
    const r = await stack.client.get(path(executionId));
    return r.body.pendingTasks?.[0]?.approvalId as string | undefined;
  });
  const record = await stack.client.get(`/v1/approvals/${approvalId}`, alice);
  expect(record.status).toBe(200);
  return record.body;
}

async function history(executionId: string): Promise<{ type: string; [k: string]: any }[]> {
  const r = await stack.client.get(`${path(executionId)}/history?limit=1000`);
  expect(r.status).toBe(200);
  return r.body.items;
}

const decide = (approvalId: string, envelopeHash: string) =>
  stack.client.post(
    `/v1/approvals/${approvalId}/decisions`,
    { decision: "APPROVE", envelopeHash },
    alice,
  );

/** The record's hash key under the stack's prefix (its shard's key, whatever the layout). */
async function recordKey(approvalId: string): Promise<string> {
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${stack.prefix}*ap:${approvalId}`);
    const key = found.find((k) => k.endsWith(`ap:${approvalId}`));
    if (key) return key;
    cursor = next;
  } while (cursor !== "0");
  throw new Error(`no record key for ${approvalId}`);
}

describe("stop racing the final decision (finding 3)", () => {
  it("agrees in each of 20 concurrent decide + stop pairs", async () => {
    const seen = { approved: 0, cancelled: 0 };
    for (let i = 0; i < 20; i++) {
      const executionId = await start({ amount: i });
      const { approvalId, envelopeHash } = await approvalOf(executionId);
      const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
      // Both at once; every other try gives the decision a head start of a few ms.
      const [decided, stopped] = await Promise.all([
        decide(approvalId, envelopeHash),
        (async () => {
          if (i % 2 === 1) await wait(i % 7);
          return stack.client.post(`${path(executionId)}/stop`, {});
        })(),
      ]);
      expect(stopped.status).toBe(200);
      const done = await stack.client.until(async () => {
        const r = await stack.client.get(path(executionId));
        return r.body.status === "RUNNING" ? undefined : r.body;
      });
      expect(done.status).toBe("ABORTED");
      const record = (await stack.client.get(`/v1/approvals/${approvalId}`, alice)).body;
      const types = (await history(executionId)).map((e) => e.type);
      expect(types.at(-1)).toBe("ExecutionAborted");
      if (record.status === "APPROVED") {
        seen.approved++;
        expect(decided.status).toBe(200);
        expect(types).toContain("ApprovalDecided");
        expect(types.indexOf("ApprovalDecided")).toBeLessThan(types.indexOf("ExecutionAborted"));
      } else {
        seen.cancelled++;
        expect(record.status).toBe("CANCELLED");
        expect(decided.status).toBe(409);
        expect(decided.body.error).toBe("ApprovalNotPending");
        expect(types).not.toContain("ApprovalDecided");
      }
    }
    expect(seen.approved + seen.cancelled).toBe(20);
  }, 120_000);

  it("decide, then stop at once: the decision is in the history before the abort", async () => {
    const executionId = await start({ amount: 99 });
    const { approvalId, envelopeHash } = await approvalOf(executionId);
    expect((await decide(approvalId, envelopeHash)).status).toBe(200);
    expect((await stack.client.post(`${path(executionId)}/stop`, {})).status).toBe(200);
    const types = (await history(executionId)).map((e) => e.type);
    expect(types.indexOf("ApprovalDecided")).toBeGreaterThan(0);
    expect(types.indexOf("ApprovalDecided")).toBeLessThan(types.indexOf("ExecutionAborted"));
    const record = (await stack.client.get(`/v1/approvals/${approvalId}`, alice)).body;
    expect(record.status).toBe("APPROVED");
  });
});

describe("a record changed in Redis (finding 4)", () => {
  const hashOf = (envelope: Record<string, unknown>) =>
    createHash("sha256")
      .update(
        canonicalJson({
          executionId: envelope.executionId,
          stateName: envelope.stateName,
          enteredEventId: envelope.enteredEventId,
          subject: envelope.subject,
          details: envelope.details,
          approvers: envelope.approvers,
          requiredApprovals: envelope.requiredApprovals,
          policy: envelope.policy,
          expiresAt: envelope.expiresAt,
        } as never),
      )
      .digest("hex");

  it.each([
    ["details changed, old hash kept", false],
    ["details changed and the hash forged to match", true],
  ])("refuses the decision: %s", async (_, forge) => {
    const executionId = await start({ amount: 10, to: "bob" });
    const original = await approvalOf(executionId);
    const before = await history(executionId);
    const key = await recordKey(original.approvalId);
    const env = JSON.parse((await redis.hget(key, "env"))!) as Record<string, unknown>;
    env.details = { amount: 1_000_000, to: "mallory" };
    if (forge) env.envelopeHash = hashOf(env);
    await redis.hset(key, "env", JSON.stringify(env));
    const shown = (await stack.client.get(`/v1/approvals/${original.approvalId}`, alice)).body;
    expect(shown.details).toEqual({ amount: 1_000_000, to: "mallory" });

    for (const hash of new Set([original.envelopeHash as string, env.envelopeHash as string])) {
      const refused = await decide(original.approvalId, hash);
      expect(refused.status).toBe(409);
      expect(refused.body.error).toBe("ApprovalTampered");
    }
    expect(await history(executionId)).toEqual(before);
    const after = (await stack.client.get(`/v1/approvals/${original.approvalId}`, alice)).body;
    expect(after).toMatchObject({ status: "PENDING", decisions: [] });
    expect(await redis.hget(key, "bad")).toMatch(/ApprovalRequested/);
    expect((await stack.client.post(`${path(executionId)}/stop`, {})).status).toBe(200);
  });
});
