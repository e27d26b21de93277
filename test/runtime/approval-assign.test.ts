import { describe, expect, it } from "vitest";
import { approvalRequest } from "../../engine/states/approval.js";
import { applyAssign } from "../../runtime/approvals/approval-assign.js";
import {
  applyDecision,
  mayDecide,
  type ApprovalRecord,
  type Assignment,
} from "../../runtime/approvals/approval-record.js";

/** Human tasks (issue 40): claim, release, delegate, comment and who may decide, pure. */

const at = {
  executionId: "arn:aws:states:local:000000000000:execution:m:e",
  stateMachine: "m",
  stateName: "Ask",
  enteredEventId: 2,
  now: Date.parse("2026-01-01T00:00:00Z"),
  token: "tok-0123456789abcdef",
  timeoutSeconds: undefined as number | undefined,
};
const NOW = at.now + 1000;
const alice = { name: "alice", groups: ["finance"] };
const bob = { name: "bob", groups: ["finance"] };
const carol = { name: "carol", groups: ["legal"] };
const dave = { name: "dave", groups: [] };

function record(assignment: Assignment = {}): ApprovalRecord {
  const { explicitExpiry: _, ...request } = approvalRequest(
    { Subject: "Pay", Approvers: ["finance"], Assignees: ["dave"] },
    at,
  );
  return {
    ...request,
    status: "PENDING",
    decisions: [],
    ...assignment,
  } as unknown as ApprovalRecord;
}

describe("who may decide", () => {
  it("assignees by name and approvers by group; delegation replaces both; escalation adds", () => {
    expect(mayDecide(record(), alice)).toBe(true);
    expect(mayDecide(record(), dave)).toBe(true);
    expect(mayDecide(record(), carol)).toBe(false);
    const delegated = record({
      delegatedTo: { group: "legal", by: "bob", at: "x", comment: null },
    });
    expect(mayDecide(delegated, carol)).toBe(true);
    expect(mayDecide(delegated, alice)).toBe(false);
    expect(mayDecide(delegated, dave)).toBe(false);
    expect(mayDecide(record({ escalatedTo: ["legal"] }), carol)).toBe(true);
    expect(mayDecide(record(), { name: "ops", groups: "any" })).toBe(true);
  });
});

describe("claims", () => {
  it("a claim blocks others' decisions and claims until it is released or lapses", () => {
    const claimed = applyAssign(record(), {}, alice, { action: "claim", seconds: 60 }, NOW);
    expect(claimed).toMatchObject({ ok: true, kind: "ApprovalClaimed" });
    if (!claimed.ok) return;
    const held = record(claimed.next);
    const r = held;
    const decision = applyDecision(
      r,
      bob,
      { decision: "APPROVE", envelopeHash: r.envelopeHash },
      NOW,
    );
    expect(decision).toMatchObject({ ok: false, error: "ApprovalClaimed" });
    expect(applyAssign(held, claimed.next, bob, { action: "claim" }, NOW)).toMatchObject({
      ok: false,
      error: "ApprovalClaimed",
    });
    expect(applyAssign(held, claimed.next, bob, { action: "release" }, NOW)).toMatchObject({
      ok: false,
      error: "ApprovalClaimed",
    });
    // The holder decides; after the claim lapses, anyone may.
    expect(
      applyDecision(r, alice, { decision: "APPROVE", envelopeHash: r.envelopeHash }, NOW),
    ).toMatchObject({ ok: true });
    expect(
      applyDecision(r, bob, { decision: "APPROVE", envelopeHash: r.envelopeHash }, NOW + 61_000),
    ).toMatchObject({ ok: true });
    const released = applyAssign(held, claimed.next, alice, { action: "release" }, NOW);
    expect(released).toMatchObject({ ok: true, kind: "ApprovalReleased", next: {} });
  });

  it("delegation needs exactly one target and clears the claim; comments accumulate", () => {
    const both = applyAssign(
      record(),
      {},
      bob,
      { action: "delegate", toUser: "x", toGroup: "legal" },
      NOW,
    );
    expect(both).toMatchObject({ ok: false, error: "InvalidRequest" });
    const moved = applyAssign(
      record(),
      { claim: { by: "bob", until: new Date(NOW + 1000).toISOString() } },
      bob,
      { action: "delegate", toGroup: "legal", comment: "theirs" },
      NOW,
    );
    expect(moved).toMatchObject({
      ok: true,
      kind: "ApprovalDelegated",
      details: { toGroup: "legal", comment: "theirs" },
      next: { delegatedTo: { group: "legal", by: "bob", comment: "theirs" } },
    });
    if (moved.ok) expect(moved.next.claim).toBeUndefined();
    const said = applyAssign(record(), {}, carol, { action: "comment", text: "hi" }, NOW);
    expect(said).toMatchObject({ ok: false, error: "Forbidden" });
    const ok = applyAssign(record(), {}, dave, { action: "comment", text: " hi " }, NOW);
    expect(ok).toMatchObject({ ok: true, next: { comments: [{ by: "dave", text: "hi" }] } });
  });
});
