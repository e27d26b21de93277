import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envelopeHash, type ApprovalEnvelope } from "../../engine/states/approval.js";
import { makeKeys } from "../../runtime/store/keys.js";
import {
  createMachine,
  fullHistory,
  harness,
  historyProblems,
  type Harness,
  ONE_SHARD,
  until,
} from "./helpers.js";

/**
 * Stop and the final decision race (issue 44, finding 3): whichever commits first
 * wins. The record and the execution always agree: a decision that counted is in
 * the history (ApprovalDecided) before the stop aborts the execution; a stop that
 * came first cancels the approval and the decision is refused (ApprovalNotPending).
 *
 * The record changed in Redis (finding 4): a decision is checked against the
 * envelope the history recorded at ApprovalRequested, so it is refused and the
 * history is left as it was.
 */
let h: Harness;
let redis: Redis;
beforeAll(async () => {
  h = await harness(ONE_SHARD);
  redis = new Redis(h.redisUrl);
  await createMachine(h.runtime, "pay", {
    StartAt: "Ask",
    States: {
      Ask: {
        Type: "Task",
        Resource: "stepwise:approval",
        Parameters: { Subject: "Pay", "Details.$": "$" },
        Next: "Later",
      },
      // The execution is still RUNNING after the decision, so a stop after it aborts it.
      Later: { Type: "Wait", Seconds: 600, End: true },
    },
  });
  await h.startWorker();
});
afterAll(async () => {
  redis.disconnect();
  await h.close();
});

const alice = { name: "alice", groups: "any" } as const;

async function approvalOf(executionId: string): Promise<string> {
  let approvalId: string | undefined;
  await until(async () => {
    approvalId = (await h.runtime.pendingTasks(executionId))[0]?.approvalId;
    return approvalId !== undefined;
  });
  return approvalId!;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("stop racing the final decision", () => {
  it("gives one outcome in each of 50 concurrent APPROVE + stop pairs", async () => {
    const started = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        h.runtime.startExecution("pay", { input: { amount: i }, name: `race-${i}` }),
      ),
    );
    const pairs = await Promise.all(
      started.map(async ({ executionId }) => {
        const approvalId = await approvalOf(executionId);
        const { envelopeHash: hash } = await h.runtime.getApproval(approvalId);
        return { executionId, approvalId, hash };
      }),
    );
    const outcomes = await Promise.all(
      pairs.map(async ({ executionId, approvalId, hash }, i) => {
        // Vary who starts first and by how much (a decision reads more before it
        // commits), so both orders and the near-ties are exercised.
        const lead = (i % 10) * 8;
        const decide = (async () => {
          if (i % 2 === 1) await sleep(lead);
          return h.runtime.decideApproval(approvalId, alice, {
            decision: "APPROVE",
            envelopeHash: hash,
          });
        })().then(
          () => "ok" as const,
          (e: { code?: string }) => e.code ?? String(e),
        );
        const stop = (async () => {
          if (i % 2 === 0) await sleep(lead);
          return h.runtime.stopExecution(executionId);
        })().then(
          () => "ok" as const,
          (e: { code?: string }) => e.code ?? String(e),
        );
        return { executionId, approvalId, decided: await decide, stopped: await stop };
      }),
    );
    const seen = { approved: 0, cancelled: 0 };
    for (const { executionId, approvalId, decided, stopped } of outcomes) {
      expect(stopped).toBe("ok");
      const done = await h.runtime.waitForExecution(executionId, 10_000);
      expect(done.status).toBe("ABORTED");
      const record = await h.runtime.getApproval(approvalId);
      const history = await fullHistory(h.runtime, executionId);
      expect(historyProblems(history)).toEqual([]);
      const types = history.map((e) => e.type);
      const decidedAt = types.indexOf("ApprovalDecided");
      expect(types.at(-1)).toBe("ExecutionAborted");
      if (record.status === "APPROVED") {
        seen.approved++;
        expect(decided).toBe("ok");
        expect(decidedAt).toBeGreaterThan(0);
        expect(types.slice(decidedAt)).toContain("WaitStateEntered");
      } else {
        seen.cancelled++;
        expect(record.status).toBe("CANCELLED");
        expect(decided).toBe("ApprovalNotPending");
        expect(decidedAt).toBe(-1);
      }
    }
    expect(seen.approved + seen.cancelled).toBe(50);
  }, 60_000);

  it("lets a decision committed before the stop move the execution on", async () => {
    const { executionId } = await h.runtime.startExecution("pay", { input: { amount: 1 } });
    const approvalId = await approvalOf(executionId);
    const record = await h.runtime.getApproval(approvalId);
    await h.runtime.decideApproval(approvalId, alice, {
      decision: "APPROVE",
      envelopeHash: record.envelopeHash,
    });
    const stopped = await h.runtime.stopExecution(executionId);
    expect(stopped.status).toBe("ABORTED");
    const types = (await fullHistory(h.runtime, executionId)).map((e) => e.type);
    expect(types).toContain("ApprovalDecided");
    expect(types.indexOf("ApprovalDecided")).toBeLessThan(types.indexOf("ExecutionAborted"));
    expect((await h.runtime.getApproval(approvalId)).status).toBe("APPROVED");
  });

  it("refuses a decision after the stop and cancels the approval", async () => {
    const { executionId } = await h.runtime.startExecution("pay", { input: { amount: 2 } });
    const approvalId = await approvalOf(executionId);
    const record = await h.runtime.getApproval(approvalId);
    await h.runtime.stopExecution(executionId);
    await expect(
      h.runtime.decideApproval(approvalId, alice, {
        decision: "APPROVE",
        envelopeHash: record.envelopeHash,
      }),
    ).rejects.toMatchObject({ code: "ApprovalNotPending" });
    expect((await h.runtime.getApproval(approvalId)).status).toBe("CANCELLED");
    const types = (await fullHistory(h.runtime, executionId)).map((e) => e.type);
    expect(types).not.toContain("ApprovalDecided");
  });
});

describe("a record changed in Redis", () => {
  async function tamper(
    approvalId: string,
    change: (env: Record<string, unknown>) => void,
  ): Promise<void> {
    const key = makeKeys(h.prefix).approval(approvalId);
    const env = JSON.parse((await redis.hget(key, "env"))!) as Record<string, unknown>;
    change(env);
    await redis.hset(key, "env", JSON.stringify(env));
  }

  it.each([
    ["its details, with the hash of the changed envelope", true],
    ["its details, keeping the old hash", false],
  ])("refuses decisions when the record's envelope changed: %s", async (_, rehash) => {
    const { executionId } = await h.runtime.startExecution("pay", {
      input: { amount: 10, to: "bob" },
    });
    const approvalId = await approvalOf(executionId);
    const original = await h.runtime.getApproval(approvalId);
    const before = await fullHistory(h.runtime, executionId);
    let forged = original.envelopeHash;
    await tamper(approvalId, (env) => {
      env.details = { amount: 1_000_000, to: "mallory" };
      if (rehash) {
        forged = envelopeHash(env as unknown as ApprovalEnvelope);
        env.envelopeHash = forged;
      }
    });
    for (const hash of new Set([original.envelopeHash, forged])) {
      await expect(
        h.runtime.decideApproval(approvalId, alice, { decision: "APPROVE", envelopeHash: hash }),
      ).rejects.toMatchObject({ code: "ApprovalTampered" });
    }
    expect(await fullHistory(h.runtime, executionId)).toEqual(before);
    const record = await h.runtime.getApproval(approvalId);
    expect(record).toMatchObject({ status: "PENDING", decisions: [] });
    const flag = await redis.hget(makeKeys(h.prefix).approval(approvalId), "bad");
    expect(JSON.parse(flag!)).toMatchObject({ why: expect.stringMatching(/ApprovalRequested/) });
    await h.runtime.stopExecution(executionId);
  });

  it("accepts an untouched record, with the hash the history recorded", async () => {
    const { executionId } = await h.runtime.startExecution("pay", { input: { amount: 3 } });
    const approvalId = await approvalOf(executionId);
    const record = await h.runtime.getApproval(approvalId);
    await h.runtime.decideApproval(approvalId, alice, {
      decision: "APPROVE",
      envelopeHash: record.envelopeHash,
    });
    let history = await fullHistory(h.runtime, executionId);
    await until(async () => {
      history = await fullHistory(h.runtime, executionId);
      return history.some((e) => e.type === "ApprovalDecided");
    });
    const requested = history.find((e) => e.type === "ApprovalRequested");
    const decided = history.find((e) => e.type === "ApprovalDecided");
    expect(decided?.approvalDecidedEventDetails?.envelopeHash).toBe(
      requested?.approvalRequestedEventDetails?.envelopeHash,
    );
    await h.runtime.stopExecution(executionId);
  });
});
