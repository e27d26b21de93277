import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { StatesError } from "../../engine/core/errors.js";
import type { Json } from "../../engine/core/json.js";
import { approvalRequest, envelopeHash } from "../../engine/states/approval.js";
import { applyDecision, type ApprovalRecord } from "../../runtime/approvals/approval-record.js";

const at = {
  executionId: "arn:aws:states:local:000000000000:execution:m:e",
  stateMachine: "m",
  stateName: "Ask",
  enteredEventId: 2,
  now: Date.parse("2026-01-01T00:00:00Z"),
  token: "tok-0123456789abcdef",
  timeoutSeconds: undefined as number | undefined,
};

describe("approval envelope", () => {
  it("hashes the RFC 8785 canonical JSON of the envelope (node:crypto agrees)", () => {
    const request = approvalRequest({ Subject: "Pay", Details: { b: 1, a: "é" } }, at);
    const canonical =
      '{"approvers":[],"details":{"a":"é","b":1},"enteredEventId":2,"executionId":"arn:aws:states:local:000000000000:execution:m:e","expiresAt":null,"policy":null,"requiredApprovals":1,"stateName":"Ask","subject":"Pay"}';
    expect(request.envelopeHash).toBe(createHash("sha256").update(canonical).digest("hex"));
    expect(envelopeHash(request)).toBe(request.envelopeHash);
    expect(request.approvalId).toMatch(/^ap_[0-9a-f]{24}$/);
  });

  it.each<[string, Json, RegExp]>([
    ["no Subject", { Details: 1 }, /'Subject' is required/],
    ["empty Subject", { Subject: " " }, /'Subject' is required/],
    ["not an object", "yes", /must be an object/],
    ["bad Approvers", { Subject: "x", Approvers: "finance" }, /'Approvers'/],
    ["bad group", { Subject: "x", Approvers: ["a b"] }, /'Approvers'/],
    ["RequiredApprovals 0", { Subject: "x", RequiredApprovals: 0 }, /'RequiredApprovals'/],
    ["RequiredApprovals 1.5", { Subject: "x", RequiredApprovals: 1.5 }, /'RequiredApprovals'/],
    ["Policy number", { Subject: "x", Policy: 3 }, /'Policy'/],
    [
      "both expiries",
      { Subject: "x", ExpiresInSeconds: 1, ExpiresAt: "2026-01-02T00:00:00Z" },
      /not both/,
    ],
    ["bad ExpiresAt", { Subject: "x", ExpiresAt: "tomorrow" }, /'ExpiresAt'/],
    ["unknown field", { Subject: "x", Amount: 3 }, /'Amount' is not an approval field/],
  ])("%s → States.Runtime naming the field", (_, input, message) => {
    let thrown: unknown;
    try {
      approvalRequest(input, at);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(StatesError);
    expect((thrown as StatesError).error).toBe("States.Runtime");
    expect((thrown as StatesError).cause).toMatch(message);
  });

  it("expiry: ExpiresInSeconds, ExpiresAt, else TimeoutSeconds, else never", () => {
    expect(approvalRequest({ Subject: "x", ExpiresInSeconds: 60 }, at).expiresAt).toBe(
      "2026-01-01T00:01:00.000Z",
    );
    expect(
      approvalRequest({ Subject: "x", ExpiresAt: "2026-01-01T02:00:00+01:00" }, at).expiresAt,
    ).toBe("2026-01-01T01:00:00.000Z");
    expect(approvalRequest({ Subject: "x" }, { ...at, timeoutSeconds: 30 }).expiresAt).toBe(
      "2026-01-01T00:00:30.000Z",
    );
    expect(approvalRequest({ Subject: "x" }, at).expiresAt).toBeNull();
  });
});

describe("applyDecision", () => {
  const request = approvalRequest(
    { Subject: "x", Approvers: ["finance"], RequiredApprovals: 2 },
    at,
  );
  const { explicitExpiry: _, ...rest } = request;
  const record: ApprovalRecord = { ...rest, status: "PENDING", decisions: [] };
  const finance = (name: string) => ({ name, groups: ["finance"] });
  const approve = { decision: "APPROVE" as const, envelopeHash: record.envelopeHash };

  it("counts distinct approvers up to RequiredApprovals; one REJECT ends it", () => {
    const one = applyDecision(record, finance("a"), approve, at.now);
    expect(one).toMatchObject({ ok: true, status: "PENDING" });
    if (!one.ok) return;
    const after = { ...record, decisions: one.decisions };
    expect(applyDecision(after, finance("b"), approve, at.now)).toMatchObject({
      status: "APPROVED",
    });
    expect(applyDecision(after, finance("a"), approve, at.now)).toMatchObject({
      ok: false,
      error: "AlreadyDecided",
    });
    expect(
      applyDecision(after, finance("b"), { ...approve, decision: "REJECT" }, at.now),
    ).toMatchObject({ status: "REJECTED" });
  });

  it("refuses other groups, other hashes and closed records", () => {
    expect(applyDecision(record, { name: "c", groups: ["legal"] }, approve, at.now)).toMatchObject({
      error: "Forbidden",
    });
    expect(applyDecision(record, { name: "c", groups: "any" }, approve, at.now)).toMatchObject({
      ok: true,
    });
    expect(
      applyDecision(record, finance("a"), { ...approve, envelopeHash: "0".repeat(64) }, at.now),
    ).toMatchObject({ error: "EnvelopeMismatch" });
    expect(
      applyDecision({ ...record, status: "EXPIRED" }, finance("a"), approve, at.now),
    ).toMatchObject({ error: "ApprovalNotPending" });
  });

  it("says why one local caller cannot meet RequiredApprovals > 1", () => {
    const local = { name: "local", groups: "any" as const };
    const one = applyDecision(record, local, approve, at.now);
    if (!one.ok) throw new Error("first decision refused");
    const twice = applyDecision({ ...record, decisions: one.decisions }, local, approve, at.now);
    expect(twice).toMatchObject({ ok: false, error: "AlreadyDecided" });
    if (!twice.ok) expect(twice.message).toMatch(/STEPWISE_API_KEYS/);
  });
});
