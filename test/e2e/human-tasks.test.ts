import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnBin } from "./processes.js";
import { API_KEYS, startStack, type Stack } from "./stack.js";

/**
 * Human tasks (issue 40) through `bin/stepwise.js`: forms (`ResponseSchema`), edits
 * before approval (`Editable`, EDIT with an RFC 6902 patch, recorded in the history
 * and verified by `stepwise audit verify`), and the decision kinds. One service for
 * the file; approvers are API keys in groups, as in production.
 */
const SECRETS = {
  alice: "alice-secret-0123456789abcdef",
  bob: "bob-secret-0123456789abcdefgh",
  carol: "carol-secret-0123456789abcdef",
  dave: "dave-secret-0123456789abcdefgh",
};
const alice = { key: SECRETS.alice };
const bob = { key: SECRETS.bob };
const carol = { key: SECRETS.carol };
const dave = { key: SECRETS.dave };

const FORM = {
  type: "object",
  required: ["reason", "limit"],
  additionalProperties: false,
  properties: {
    reason: { enum: ["budget", "vendor", "other"] },
    limit: { type: "number", minimum: 0 },
    urgent: { type: "boolean" },
  },
};

const definition = {
  StartAt: "Ask",
  States: {
    Ask: {
      Type: "Task",
      Resource: "arn:aws:states:::stepwise:approval",
      Parameters: {
        "Subject.$": "States.Format('Pay {} to {}', $.amount, $.payee)",
        "Details.$": "$",
        Approvers: ["finance"],
        "RequiredApprovals.$": "$.required",
        ResponseSchema: FORM,
        Editable: ["$.amount", "$.payee"],
      },
      End: true,
    },
  },
};

/** Assignment: finance decides, or dave by name; no form. */
const assigned = {
  StartAt: "Ask",
  States: {
    Ask: {
      Type: "Task",
      Resource: "arn:aws:states:::stepwise:approval",
      Parameters: {
        "Subject.$": "$.subject",
        "Details.$": "$",
        Approvers: ["finance"],
        Assignees: ["dave"],
      },
      End: true,
    },
  },
};

let stack: Stack;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "stepwise-human-tasks-"));
  const keyFile = join(dir, "audit-key.pem");
  const pair = generateKeyPairSync("ed25519");
  writeFileSync(keyFile, pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string);
  stack = await startStack({
    apiKeys: `${API_KEYS},alice:approve:${SECRETS.alice},bob:approve:${SECRETS.bob},carol:approve:${SECRETS.carol},dave:approve:${SECRETS.dave}`,
    approverGroups: "alice=finance;bob=finance;carol=legal",
    env: { STEPWISE_AUDIT_KEY: keyFile },
  });
  const created = await stack.client.post("/v1/state-machines", { name: "pay", definition });
  expect(created.status).toBe(201);
  const second = await stack.client.post("/v1/state-machines", {
    name: "assigned",
    definition: assigned,
  });
  expect(second.status).toBe(201);
});
afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const path = (executionId: string) => `/v1/executions/${encodeURIComponent(executionId)}`;

async function start(input: object, machine = "pay"): Promise<string> {
  const started = await stack.client.post(`/v1/state-machines/${machine}/executions`, { input });
  expect(started.status).toBe(201);
  return started.body.executionId;
}

async function pending(executionId: string): Promise<{ approvalId: string; envelopeHash: string }> {
  const approvalId = await stack.client.until(async () => {
    const r = await stack.client.get(path(executionId));
    return r.body.pendingTasks?.[0]?.approvalId as string | undefined;
  }, 30_000);
  const record = await stack.client.get(`/v1/approvals/${approvalId}`, alice);
  expect(record.status).toBe(200);
  return { approvalId, envelopeHash: record.body.envelopeHash };
}

async function finished(executionId: string): Promise<any> {
  return stack.client.until(async () => {
    const r = await stack.client.get(path(executionId));
    return r.body.status === "RUNNING" ? undefined : r.body;
  }, 30_000);
}

async function history(executionId: string): Promise<{ type: string; [k: string]: any }[]> {
  const r = await stack.client.get(`${path(executionId)}/history?limit=1000`);
  expect(r.status).toBe(200);
  return r.body.items;
}

const decide = (approvalId: string, body: object, who: { key: string } = alice) =>
  stack.client.post(`/v1/approvals/${approvalId}/decisions`, body, who);

/** The execution's signed export, verified by `stepwise audit verify` as a user runs it. */
async function auditVerifies(executionId: string, name: string): Promise<string> {
  const r = await fetch(`${stack.url}${path(executionId)}/audit`, {
    headers: { authorization: `Bearer ${stack.client.defaultKey}` },
  });
  expect(r.status).toBe(200);
  const file = join(dir, `${name}.jsonl`);
  const text = await r.text();
  writeFileSync(file, text);
  const key = await stack.client.get("/v1/audit/public-key");
  const pem = join(dir, `${name}.pem`);
  writeFileSync(pem, key.text);
  const spawned = spawnBin(["audit", "verify", file, "--public-key", pem]);
  const code = await new Promise<number | null>((resolve) => spawned.child.once("close", resolve));
  expect(spawned.output()).toMatch(/OK: \d+ events of arn:aws:states:/);
  expect(code).toBe(0);
  return text;
}

describe("forms: ResponseSchema", () => {
  it("refuses a response that fails the form (400 naming the field, nothing recorded); one that fits reaches the output", async () => {
    const executionId = await start({ amount: 120, payee: "ACME", required: 1 });
    const { approvalId, envelopeHash } = await pending(executionId);
    const record = await stack.client.get(`/v1/approvals/${approvalId}`, alice);
    expect(record.body.responseSchema).toEqual(FORM);
    expect(record.body.responseSchemaHash).toMatch(/^[0-9a-f]{64}$/);
    expect(record.body.editable).toEqual(["$.amount", "$.payee"]);

    const wrongType = await decide(approvalId, {
      decision: "APPROVE",
      envelopeHash,
      response: { reason: "budget", limit: "ten" },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error).toBe("InvalidRequest");
    expect(wrongType.body.message).toContain("'/limit'");
    const missing = await decide(approvalId, {
      decision: "APPROVE",
      envelopeHash,
      response: { limit: 1 },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain("'/reason'");
    const none = await decide(approvalId, { decision: "APPROVE", envelopeHash });
    expect(none.status).toBe(400);
    const after = await stack.client.get(`/v1/approvals/${approvalId}`, alice);
    expect(after.body).toMatchObject({ status: "PENDING", decisions: [] });
    expect((await history(executionId)).map((e) => e.type)).not.toContain("ApprovalDecided");

    const response = { reason: "vendor", limit: 500, urgent: true };
    const ok = await decide(approvalId, { decision: "APPROVE", envelopeHash, response });
    expect(ok.status).toBe(200);
    expect(ok.body.decisions[0]).toMatchObject({
      approver: "alice",
      decision: "APPROVE",
      response,
    });
    const done = await finished(executionId);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output).toMatchObject({ decision: "APPROVED", approvalId, response });
    const decided = (await history(executionId)).find((e) => e.type === "ApprovalDecided");
    expect(JSON.parse(decided!.approvalDecidedEventDetails.response)).toEqual(response);
    const requested = (await history(executionId)).find((e) => e.type === "ApprovalRequested");
    expect(JSON.parse(requested!.approvalRequestedEventDetails.responseSchema)).toEqual(FORM);
  });

  it("binds the answer to the form: the envelope hash covers the schema's hash", async () => {
    const executionId = await start({ amount: 5, payee: "Form", required: 1 });
    const { approvalId } = await pending(executionId);
    const record = (await stack.client.get(`/v1/approvals/${approvalId}`, alice)).body;
    // The hash an old client computes without the form is refused.
    const { createHash } = await import("node:crypto");
    const canonical = (v: any): string =>
      Array.isArray(v)
        ? `[${v.map(canonical).join(",")}]`
        : v && typeof v === "object"
          ? `{${Object.keys(v)
              .sort()
              .map((k) => JSON.stringify(k) + ":" + canonical(v[k]))
              .join(",")}}`
          : JSON.stringify(v);
    const fields = [
      "executionId",
      "stateName",
      "enteredEventId",
      "subject",
      "details",
      "approvers",
      "requiredApprovals",
      "policy",
      "expiresAt",
    ];
    const without: Record<string, unknown> = {};
    for (const k of fields) without[k] = record[k];
    const stale = createHash("sha256").update(canonical(without)).digest("hex");
    const withForm = {
      ...without,
      responseSchemaHash: record.responseSchemaHash,
      editable: record.editable,
    };
    expect(createHash("sha256").update(canonical(withForm)).digest("hex")).toBe(
      record.envelopeHash,
    );
    expect(createHash("sha256").update(canonical(FORM)).digest("hex")).toBe(
      record.responseSchemaHash,
    );
    const refused = await decide(approvalId, {
      decision: "APPROVE",
      envelopeHash: stale,
      response: { reason: "other", limit: 1 },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe("EnvelopeMismatch");
    const rejected = await decide(approvalId, {
      decision: "REJECT",
      envelopeHash: record.envelopeHash,
      comment: "no",
    });
    expect(rejected.status).toBe(200);
    expect(await finished(executionId)).toMatchObject({
      status: "FAILED",
      error: "Stepwise.ApprovalRejected",
    });
  });
});

describe("edit before approval: EDIT and Editable", () => {
  it("refuses a patch outside Editable; records one inside (history, audit export verifies) and outputs the edited details", async () => {
    const input = { amount: 25000, payee: "ACME GmbH", required: 2 };
    const executionId = await start(input);
    const { approvalId, envelopeHash } = await pending(executionId);
    const response = { reason: "budget", limit: 20000 };

    const outside = await decide(approvalId, {
      decision: "EDIT",
      envelopeHash,
      response,
      patch: [{ op: "replace", path: "/required", value: 1 }],
    });
    expect(outside.status).toBe(400);
    expect(outside.body.error).toBe("InvalidRequest");
    expect(outside.body.message).toContain("'/required' is not editable");
    const move = await decide(approvalId, {
      decision: "EDIT",
      envelopeHash,
      response,
      patch: [{ op: "move", from: "/payee", path: "/amount" }],
    });
    expect(move.status).toBe(400);
    const patchWithApprove = await decide(approvalId, {
      decision: "APPROVE",
      envelopeHash,
      response,
      patch: [{ op: "replace", path: "/amount", value: 1 }],
    });
    expect(patchWithApprove.status).toBe(400);
    expect((await stack.client.get(`/v1/approvals/${approvalId}`, alice)).body.decisions).toEqual(
      [],
    );

    const patch = [
      { op: "test", path: "/amount", value: 25000 },
      { op: "replace", path: "/amount", value: 20000 },
    ];
    const edit = await decide(approvalId, { decision: "EDIT", envelopeHash, response, patch });
    expect(edit.status).toBe(200);
    expect(edit.body).toMatchObject({
      status: "PENDING",
      decisions: [{ approver: "alice", decision: "EDIT", patch, response }],
    });
    // The second approver approves; the output carries the edited details and the patch.
    const second = await decide(
      approvalId,
      { decision: "APPROVE", envelopeHash, response: { reason: "budget", limit: 20000 } },
      bob,
    );
    expect(second.status).toBe(200);
    expect(second.body.status).toBe("APPROVED");
    const done = await finished(executionId);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output).toMatchObject({
      decision: "APPROVED",
      details: { ...input, amount: 20000 },
      patch,
    });
    const decided = (await history(executionId)).filter((e) => e.type === "ApprovalDecided");
    expect(decided.map((e) => e.approvalDecidedEventDetails.decision)).toEqual(["EDIT", "APPROVE"]);
    expect(JSON.parse(decided[0]!.approvalDecidedEventDetails.patch)).toEqual(patch);

    const exported = await auditVerifies(executionId, "edit");
    expect(exported).toContain('"decision":"EDIT"');
    expect(exported).toContain('\\"op\\":\\"replace\\"');
  });

  it("RESPOND answers the form only", async () => {
    const executionId = await start({ amount: 7, payee: "Q", required: 1 });
    const { approvalId, envelopeHash } = await pending(executionId);
    const response = { reason: "other", limit: 0 };
    const r = await decide(approvalId, { decision: "RESPOND", envelopeHash, response }, bob);
    expect(r.status).toBe(200);
    const done = await finished(executionId);
    expect(done).toMatchObject({ status: "SUCCEEDED", output: { response } });
    expect(done.output.decisions[0]).toMatchObject({ approver: "bob", decision: "RESPOND" });
  });

  it("the validator rejects an invalid ResponseSchema when the machine is created", async () => {
    const bad = structuredClone(definition) as any;
    bad.States.Ask.Parameters.ResponseSchema = { type: "object", required: "reason" };
    const r = await stack.client.post("/v1/state-machines", { name: "bad-form", definition: bad });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("InvalidDefinition");
    expect(JSON.stringify(r.body.details)).toContain("/States/Ask/Parameters/ResponseSchema");
    expect(JSON.stringify(r.body.details)).toContain("not a valid JSON Schema");
  });
});

describe("assignment: claim, release, delegate, comment", () => {
  const act = (approvalId: string, what: string, body: object | undefined, who: { key: string }) =>
    stack.client.post(`/v1/approvals/${approvalId}/${what}`, body ?? {}, who);

  it("a claim by one approver makes another's decision 409 until released; comments are recorded", async () => {
    const executionId = await start({ subject: "Renew the lease" }, "assigned");
    const { approvalId, envelopeHash } = await pending(executionId);
    // Dave is an assignee by name; he reads it although he is in no group.
    expect((await stack.client.get(`/v1/approvals/${approvalId}`, dave)).body.assignees).toEqual([
      "dave",
    ]);
    const claimed = await act(approvalId, "claim", { seconds: 600 }, alice);
    expect(claimed.status).toBe(200);
    expect(claimed.body.claim).toMatchObject({ by: "alice" });

    // The inbox filters: claimed by me, assigned to me.
    const ids = async (query: string, who: { key: string }) =>
      (await stack.client.get(`/v1/approvals?status=PENDING&${query}`, who)).body.items.map(
        (a: any) => a.approvalId,
      );
    expect(await ids("claimed=me", alice)).toContain(approvalId);
    expect(await ids("claimed=me", bob)).not.toContain(approvalId);
    expect(await ids("assigned=me", dave)).toContain(approvalId);
    expect(await ids("assigned=me", alice)).not.toContain(approvalId);

    const blocked = await decide(approvalId, { decision: "APPROVE", envelopeHash }, bob);
    expect(blocked.status).toBe(409);
    expect(blocked.body.error).toBe("ApprovalClaimed");
    expect((await act(approvalId, "claim", {}, bob)).status).toBe(409);
    expect((await act(approvalId, "release", undefined, bob)).status).toBe(409);

    const said = await act(approvalId, "comments", { text: "checking the contract" }, alice);
    expect(said.status).toBe(200);
    expect(said.body.comments).toMatchObject([{ by: "alice", text: "checking the contract" }]);
    const released = await act(approvalId, "release", undefined, alice);
    expect(released.status).toBe(200);
    expect(released.body.claim).toBeUndefined();

    const decided = await decide(approvalId, { decision: "APPROVE", envelopeHash }, dave);
    expect(decided.status).toBe(200);
    expect((await finished(executionId)).status).toBe("SUCCEEDED");
    const events = await history(executionId);
    const types = events.map((e) => e.type).filter((t) => t.startsWith("Approval"));
    expect(types).toEqual([
      "ApprovalRequested",
      "ApprovalClaimed",
      "ApprovalCommented",
      "ApprovalReleased",
      "ApprovalDecided",
    ]);
    const claimedEvent = events.find((e) => e.type === "ApprovalClaimed")!;
    expect(claimedEvent.approvalClaimedEventDetails).toMatchObject({ approvalId, by: "alice" });
    const comment = events.find((e) => e.type === "ApprovalCommented")!;
    expect(comment.approvalCommentedEventDetails.comment).toBe("checking the contract");
  });

  it("delegate moves it to another group, whose member then decides; audit export verifies", async () => {
    const executionId = await start({ subject: "Sign the NDA" }, "assigned");
    const { approvalId, envelopeHash } = await pending(executionId);
    // Carol (legal) may not act on it yet.
    expect((await decide(approvalId, { decision: "APPROVE", envelopeHash }, carol)).status).toBe(
      403,
    );
    const moved = await act(
      approvalId,
      "delegate",
      { toGroup: "legal", comment: "legal owns NDAs" },
      bob,
    );
    expect(moved.status).toBe(200);
    expect(moved.body.delegatedTo).toMatchObject({
      group: "legal",
      by: "bob",
      comment: "legal owns NDAs",
    });
    // Listed under its new group.
    const legal = await stack.client.get("/v1/approvals?status=PENDING&approver=legal");
    expect(legal.body.items.map((a: any) => a.approvalId)).toContain(approvalId);
    // The envelope (what was reviewed) did not change: the same hash decides.
    expect(moved.body.envelopeHash).toBe(envelopeHash);
    // Finance no longer decides it.
    expect((await decide(approvalId, { decision: "APPROVE", envelopeHash }, alice)).status).toBe(
      403,
    );
    const yes = await decide(
      approvalId,
      { decision: "APPROVE", envelopeHash, comment: "fine" },
      carol,
    );
    expect(yes.status).toBe(200);
    const done = await finished(executionId);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output.decisions).toMatchObject([{ approver: "carol", decision: "APPROVE" }]);
    const delegated = (await history(executionId)).find((e) => e.type === "ApprovalDelegated")!;
    expect(delegated.approvalDelegatedEventDetails).toMatchObject({
      approvalId,
      by: "bob",
      toGroup: "legal",
      comment: "legal owns NDAs",
    });
    const exported = await auditVerifies(executionId, "delegate");
    expect(exported).toContain("ApprovalDelegated");
  });
});
