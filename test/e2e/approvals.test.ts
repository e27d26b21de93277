import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../../runtime/store/canonical.js";
import { API_KEYS, KEYS, startStack, type Stack } from "./stack.js";

/**
 * `stepwise:approval` over HTTP on real Redis: the record created with the task,
 * the inbox, decisions bound to the envelope hash, the outcomes, quorum and groups.
 */
const APPROVERS = {
  alice: "alice-secret-0123456789abcdef",
  bob: "bob-secret-0123456789abcdefgh",
  carol: "carol-secret-0123456789abcdef",
};
const alice = { key: APPROVERS.alice };
const bob = { key: APPROVERS.bob };
const carol = { key: APPROVERS.carol };

let stack: Stack;

const machine = (parameters: object, extra: object = {}) => ({
  StartAt: "Ask",
  States: {
    Ask: {
      Type: "Task",
      Resource: "arn:aws:states:::stepwise:approval",
      Parameters: parameters,
      ResultPath: "$.approval",
      Catch: [
        {
          ErrorEquals: ["Stepwise.ApprovalRejected"],
          ResultPath: "$.rejected",
          Next: "WasRejected",
        },
      ],
      Next: "Done",
      ...extra,
    },
    Done: { Type: "Succeed" },
    WasRejected: { Type: "Pass", Result: "rejected", ResultPath: "$.outcome", End: true },
  },
});

beforeAll(async () => {
  stack = await startStack({
    apiKeys: `${API_KEYS},alice:approve:${APPROVERS.alice},bob:approve:${APPROVERS.bob},carol:approve:${APPROVERS.carol}`,
    approverGroups: "alice=finance|legal;bob=finance;carol=legal",
  });
  const machines = {
    pay: machine({
      Subject: "Pay an invoice",
      "Details.$": "$.invoice",
      Approvers: ["finance"],
      "RequiredApprovals.$": "$.required",
      Policy: "payments-v3",
    }),
    open: machine({ Subject: "Anyone may say yes", "Details.$": "$" }),
    // Built at run time, so only the step can tell that Subject is missing.
    nosubject: {
      QueryLanguage: "JSONata",
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "stepwise:approval",
          Arguments: "{% {'Details': {'what': 'no subject'}} %}",
          End: true,
        },
      },
    },
    expiring: machine({ Subject: "Quick", "ExpiresInSeconds.$": "$.seconds" }),
    timeout: {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "stepwise:approval.waitForTaskToken",
          Parameters: { Subject: "Expires with the state's TimeoutSeconds" },
          TimeoutSeconds: 1,
          Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.error", Next: "Expired" }],
          End: true,
        },
        Expired: { Type: "Pass", End: true },
      },
    },
  };
  for (const [name, definition] of Object.entries(machines)) {
    const created = await stack.client.post("/v1/state-machines", { name, definition });
    expect(created.status).toBe(201);
  }
});
afterAll(async () => {
  await stack?.close();
});

async function start(machineName: string, input: object): Promise<string> {
  const started = await stack.client.post(`/v1/state-machines/${machineName}/executions`, {
    input,
  });
  expect(started.status).toBe(201);
  return started.body.executionId as string;
}

/** The pending approval of an execution, found through `pendingTasks`. */
async function approvalOf(executionId: string): Promise<any> {
  const { client } = stack;
  const approvalId = await client.until(async () => {
    const r = await client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.body.pendingTasks?.[0]?.approvalId as string | undefined;
  });
  const record = await client.get(`/v1/approvals/${approvalId}`, alice);
  expect(record.status).toBe(200);
  return record.body;
}

async function finished(executionId: string): Promise<any> {
  const { client } = stack;
  return client.until(async () => {
    const r = await client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.body.status === "RUNNING" ? undefined : r.body;
  });
}

async function history(executionId: string): Promise<any[]> {
  const r = await stack.client.get(
    `/v1/executions/${encodeURIComponent(executionId)}/history?limit=1000`,
  );
  return r.body.items;
}

function decide(approval: any, decision: string, who: { key: string }, hash?: string) {
  return stack.client.post(
    `/v1/approvals/${approval.approvalId}/decisions`,
    { decision, envelopeHash: hash ?? approval.envelopeHash, comment: `${decision} by test` },
    who,
  );
}

describe("stepwise:approval", () => {
  it("creates a record bound to a recomputable envelope hash, listed in the inbox", async () => {
    const invoice = { amount: 120, to: "ACME" };
    const executionId = await start("pay", { invoice, required: 1 });
    const approval = await approvalOf(executionId);
    expect(approval).toMatchObject({
      executionId,
      stateMachine: "pay",
      stateName: "Ask",
      subject: "Pay an invoice",
      details: invoice,
      approvers: ["finance"],
      requiredApprovals: 1,
      policy: "payments-v3",
      expiresAt: null,
      status: "PENDING",
      decisions: [],
    });
    const envelope = {
      executionId,
      stateName: "Ask",
      enteredEventId: approval.enteredEventId,
      subject: "Pay an invoice",
      details: invoice,
      approvers: ["finance"],
      requiredApprovals: 1,
      policy: "payments-v3",
      expiresAt: null,
    };
    expect(approval.envelopeHash).toBe(
      createHash("sha256").update(canonicalJson(envelope)).digest("hex"),
    );
    const entered = (await history(executionId)).find((e) => e.id === approval.enteredEventId);
    expect(entered).toMatchObject({ type: "TaskStateEntered" });

    const inbox = await stack.client.get("/v1/approvals?status=PENDING&approver=finance", bob);
    expect(inbox.status).toBe(200);
    expect(inbox.body.items.map((a: any) => a.approvalId)).toContain(approval.approvalId);
    const legal = await stack.client.get("/v1/approvals?status=PENDING&approver=legal", carol);
    expect(legal.body.items.map((a: any) => a.approvalId)).not.toContain(approval.approvalId);
    const byMachine = await stack.client.get("/v1/approvals?stateMachine=open", alice);
    expect(byMachine.body.items.map((a: any) => a.approvalId)).not.toContain(approval.approvalId);
  });

  it("wrong hash → 409 EnvelopeMismatch and nothing recorded; approve → SUCCEEDED with the decision", async () => {
    const executionId = await start("pay", { invoice: { amount: 7 }, required: 1 });
    const approval = await approvalOf(executionId);
    const wrong = await decide(approval, "APPROVE", bob, "0".repeat(64));
    expect(wrong.status).toBe(409);
    expect(wrong.body.error).toBe("EnvelopeMismatch");
    expect(
      (await stack.client.get(`/v1/approvals/${approval.approvalId}`, bob)).body.decisions,
    ).toEqual([]);

    const ok = await decide(approval, "APPROVE", bob);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      status: "APPROVED",
      decisions: [{ approver: "bob", decision: "APPROVE", comment: "APPROVE by test" }],
    });
    const done = await finished(executionId);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output.approval).toMatchObject({
      decision: "APPROVED",
      approvalId: approval.approvalId,
      envelopeHash: approval.envelopeHash,
      decisions: [{ approver: "bob", decision: "APPROVE" }],
    });
    const events = await history(executionId);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const decided = events.find((e) => e.type === "ApprovalDecided");
    expect(decided.approvalDecidedEventDetails).toMatchObject({
      approvalId: approval.approvalId,
      envelopeHash: approval.envelopeHash,
      approver: "bob",
      decision: "APPROVE",
      comment: "APPROVE by test",
      status: "APPROVED",
    });
    const requested = events.find((e) => e.type === "ApprovalRequested");
    expect(requested.approvalRequestedEventDetails).toMatchObject({
      approvalId: approval.approvalId,
      envelopeHash: approval.envelopeHash,
    });
    expect(
      events.find((e) => e.type === "TaskSucceeded").taskSucceededEventDetails.callerName,
    ).toBe("bob");

    const again = await decide(approval, "REJECT", alice);
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("ApprovalNotPending");
  });

  it("reject → Stepwise.ApprovalRejected, caught by the Catch path", async () => {
    const executionId = await start("pay", { invoice: { amount: 9 }, required: 2 });
    const approval = await approvalOf(executionId);
    expect((await decide(approval, "REJECT", alice)).body.status).toBe("REJECTED");
    const done = await finished(executionId);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output.outcome).toBe("rejected");
    expect(done.output.rejected.Error).toBe("Stepwise.ApprovalRejected");
    expect(JSON.parse(done.output.rejected.Cause)).toMatchObject([
      { approver: "alice", decision: "REJECT" },
    ]);
  });

  it("two-person rule: the same key twice → 409; a second key approves", async () => {
    const executionId = await start("pay", { invoice: { amount: 5000 }, required: 2 });
    const approval = await approvalOf(executionId);
    const first = await decide(approval, "APPROVE", alice);
    expect(first.body).toMatchObject({ status: "PENDING", decisions: [{ approver: "alice" }] });
    const twice = await decide(approval, "APPROVE", alice);
    expect(twice.status).toBe(409);
    expect(twice.body.error).toBe("AlreadyDecided");
    expect(twice.body.message).toMatch(/2 distinct approvers/);
    expect(
      (await stack.client.get(`/v1/executions/${encodeURIComponent(executionId)}`)).body.status,
    ).toBe("RUNNING");
    const second = await decide(approval, "APPROVE", bob);
    expect(second.body.status).toBe("APPROVED");
    const done = await finished(executionId);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output.approval.decisions.map((d: any) => d.approver)).toEqual(["alice", "bob"]);
    const decided = (await history(executionId)).filter((e) => e.type === "ApprovalDecided");
    expect(decided.map((e) => e.approvalDecidedEventDetails.status)).toEqual([
      "PENDING",
      "APPROVED",
    ]);
  });

  it("concurrent decisions cannot over-count", async () => {
    const executionId = await start("pay", { invoice: { amount: 1 }, required: 3 });
    const approval = await approvalOf(executionId);
    const replies = await Promise.all([
      decide(approval, "APPROVE", alice),
      decide(approval, "APPROVE", bob),
      decide(approval, "APPROVE", alice),
      decide(approval, "APPROVE", bob),
    ]);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(2);
    const record = (await stack.client.get(`/v1/approvals/${approval.approvalId}`, bob)).body;
    expect(record.status).toBe("PENDING");
    expect(record.decisions.map((d: any) => d.approver).sort()).toEqual(["alice", "bob"]);
    await stack.client.post(`/v1/executions/${encodeURIComponent(executionId)}/stop`, {});
  });

  it("groups: a key outside Approvers gets 403; admin may decide anything; scopes are checked", async () => {
    const executionId = await start("pay", { invoice: { amount: 3 }, required: 1 });
    const approval = await approvalOf(executionId);
    const outsider = await decide(approval, "APPROVE", carol);
    expect(outsider.status).toBe(403);
    expect(outsider.body.error).toBe("Forbidden");
    const runner = await decide(approval, "APPROVE", { key: KEYS.run });
    expect(runner.status).toBe(403);
    expect((await stack.client.get("/v1/approvals", { key: KEYS.callback })).status).toBe(403);
    const admin = await decide(approval, "APPROVE", { key: KEYS.admin });
    expect(admin.body).toMatchObject({ status: "APPROVED", decisions: [{ approver: "ops" }] });
    expect((await finished(executionId)).status).toBe("SUCCEEDED");
  });

  it("an approve key sees only the approvals it may decide: list, read and stream", async () => {
    const stream = await fetch(`${stack.url}/v1/approvals/events`, {
      headers: { "x-api-key": APPROVERS.carol },
    });
    const reader = stream.body!.getReader();
    const executionId = await start("pay", { invoice: { amount: 9 }, required: 1 });
    const finance = await approvalOf(executionId);
    const open = await approvalOf(await start("open", { visible: true }));
    // carol (legal) does not see finance's approval, its details or its existence.
    const listed = await stack.client.get("/v1/approvals?limit=1000", carol);
    const ids = listed.body.items.map((a: any) => a.approvalId);
    expect(ids).toContain(open.approvalId);
    expect(ids).not.toContain(finance.approvalId);
    const read = await stack.client.get(`/v1/approvals/${finance.approvalId}`, carol);
    expect(read.status).toBe(404);
    expect(read.body.error).toBe("ApprovalDoesNotExist");
    // bob (finance) sees it; the admin sees everything.
    const bobs = await stack.client.get("/v1/approvals?limit=1000", bob);
    expect(bobs.body.items.map((a: any) => a.approvalId)).toContain(finance.approvalId);
    expect((await stack.client.get(`/v1/approvals/${finance.approvalId}`)).status).toBe(200);
    // carol's stream carried the open approval's creation and nothing of finance's.
    let text = "";
    while (!text.includes(open.approvalId)) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    expect(text).not.toContain(finance.approvalId);
  });

  it("no Approvers: any approve key decides", async () => {
    const executionId = await start("open", { x: 1 });
    const approval = await approvalOf(executionId);
    expect((await decide(approval, "APPROVE", carol)).body.status).toBe("APPROVED");
    expect((await finished(executionId)).status).toBe("SUCCEEDED");
  });

  it("/v1/task-tokens refuses an approval's token; pendingTasks shows tokens to admin only", async () => {
    const executionId = await start("pay", { invoice: { amount: 4 }, required: 1 });
    const approval = await approvalOf(executionId);
    const path = `/v1/executions/${encodeURIComponent(executionId)}`;
    const asAdmin = await stack.client.get(path);
    const [task] = asAdmin.body.pendingTasks;
    expect(task).toMatchObject({
      stateName: "Ask",
      resource: "arn:aws:states:::stepwise:approval",
      approvalId: approval.approvalId,
    });
    expect(typeof task.taskToken).toBe("string");
    const asRunner = await stack.client.get(path, { key: KEYS.run });
    expect(asRunner.body.pendingTasks[0].approvalId).toBe(approval.approvalId);
    expect(asRunner.body.pendingTasks[0].taskToken).toBeUndefined();
    const token = encodeURIComponent(task.taskToken);
    for (const route of ["success", "failure", "heartbeat"]) {
      const r = await stack.client.post(
        `/v1/task-tokens/${token}/${route}`,
        route === "success" ? { output: { approved: true } } : {},
        { key: KEYS.callback },
      );
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("ApprovalRequiresDecision");
    }
    expect((await stack.client.get(path)).body.status).toBe("RUNNING");
    // A stop cancels the approval.
    await stack.client.post(`${path}/stop`, {});
    const cancelled = await stack.client.get(`/v1/approvals/${approval.approvalId}`, alice);
    expect(cancelled.body.status).toBe("CANCELLED");
    const late = await decide(approval, "APPROVE", alice);
    expect(late.body.error).toBe("ApprovalNotPending");
  });

  it("expiry: ExpiresInSeconds runs out → Stepwise.ApprovalExpired, record EXPIRED", async () => {
    const executionId = await start("expiring", { seconds: 1 });
    const approval = await approvalOf(executionId);
    expect(Date.parse(approval.expiresAt) - Date.parse(approval.createdAt)).toBe(1000);
    const done = await finished(executionId);
    expect(done).toMatchObject({ status: "FAILED", error: "Stepwise.ApprovalExpired" });
    const record = await stack.client.get(`/v1/approvals/${approval.approvalId}`, alice);
    expect(record.body.status).toBe("EXPIRED");
    const late = await decide(approval, "APPROVE", alice);
    expect(late.status).toBe(409);
    expect(late.body.error).toBe("ApprovalNotPending");
    const expiredInbox = await stack.client.get("/v1/approvals?status=EXPIRED", alice);
    expect(expiredInbox.body.items.map((a: any) => a.approvalId)).toContain(approval.approvalId);
    const pendingInbox = await stack.client.get("/v1/approvals?status=PENDING", alice);
    expect(pendingInbox.body.items.map((a: any) => a.approvalId)).not.toContain(
      approval.approvalId,
    );
  });

  it("expiry from the state's TimeoutSeconds is caught like any error", async () => {
    const executionId = await start("timeout", {});
    const approval = await approvalOf(executionId);
    expect(approval.expiresAt).not.toBeNull();
    const done = await finished(executionId);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output.error.Error).toBe("Stepwise.ApprovalExpired");
  });

  it("a missing Subject fails the state with States.Runtime naming the field", async () => {
    const executionId = await start("nosubject", {});
    const done = await finished(executionId);
    expect(done.status).toBe("FAILED");
    expect(done.error).toBe("States.Runtime");
    expect(done.cause).toMatch(/'Subject'/);
  });

  it("pages of the inbox follow each other newest first, without gaps or repeats", async () => {
    const all = await stack.client.get("/v1/approvals?limit=1000", alice);
    const ids = all.body.items.map((a: any) => a.approvalId);
    expect(ids.length).toBeGreaterThan(5);
    const created = all.body.items.map((a: any) => Date.parse(a.createdAt));
    expect([...created].sort((a, b) => b - a)).toEqual(created);
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await stack.client.get(
        `/v1/approvals?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        alice,
      );
      expect(page.status).toBe(200);
      paged.push(...page.body.items.map((a: any) => a.approvalId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(ids);
  });

  it("bad input answers 4xx naming the field", async () => {
    const r = await stack.client.post(
      "/v1/approvals/ap_000000000000000000000000/decisions",
      { decision: "MAYBE", envelopeHash: "x" },
      alice,
    );
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("InvalidRequest");
    expect(JSON.stringify(r.body.details)).toMatch(/decision|envelopeHash/);
    const missing = await stack.client.get("/v1/approvals/ap_000000000000000000000000", alice);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe("ApprovalDoesNotExist");
    const badCursor = await stack.client.get("/v1/approvals?cursor=bogus", alice);
    expect(badCursor.status).toBe(400);
  });
});
