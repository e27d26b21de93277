import { describe, expect, it } from "vitest";
import type { Approval } from "../../console/src/api/types.js";
import { mayDecide } from "../../console/src/api/permissions.js";
import { applyChange, inboxOrder, timeLeft } from "../../console/src/approvals/inbox.js";
import { parseInput } from "../../console/src/forms/json-input.js";
import { matchRoute, paths } from "../../console/src/routes.js";

/** The console's small pure pieces: inbox order, who may decide, the input check, routes. */

const approval = (
  id: string,
  expiresAt: string | null,
  createdAt: string,
  over: Partial<Approval> = {},
): Approval => ({
  approvalId: id,
  executionId: "arn:aws:states:local:000000000000:execution:pay:e1",
  stateMachine: "pay",
  stateName: "Ask",
  enteredEventId: 2,
  subject: `Approval ${id}`,
  details: null,
  approvers: [],
  requiredApprovals: 1,
  policy: null,
  createdAt,
  expiresAt,
  status: "PENDING",
  decisions: [],
  envelopeHash: "0".repeat(64),
  ...over,
});

describe("the approval inbox", () => {
  it("puts what expires first on top, never-expiring ones last, then the oldest", () => {
    const list = [
      approval("never-new", null, "2026-01-02T00:00:00Z"),
      approval("late", "2026-03-01T00:00:00Z", "2026-01-01T00:00:00Z"),
      approval("never-old", null, "2026-01-01T00:00:00Z"),
      approval("soon", "2026-02-01T00:00:00Z", "2026-01-03T00:00:00Z"),
    ];
    expect(list.sort(inboxOrder).map((a) => a.approvalId)).toEqual([
      "soon",
      "late",
      "never-old",
      "never-new",
    ]);
  });

  it("applies stream changes: a decided approval leaves, a new one takes its place in order", () => {
    const a = approval("a", "2026-02-01T00:00:00Z", "2026-01-01T00:00:00Z");
    const b = approval("b", "2026-01-15T00:00:00Z", "2026-01-01T00:00:00Z");
    expect(applyChange([a], b).map((x) => x.approvalId)).toEqual(["b", "a"]);
    expect(applyChange([b, a], { ...b, status: "APPROVED" }).map((x) => x.approvalId)).toEqual([
      "a",
    ]);
  });

  it("says how long is left", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(timeLeft(null, now)).toBe("never expires");
    expect(timeLeft("2026-01-01T01:30:00Z", now)).toBe("expires in 1 h 30 min");
    expect(timeLeft("2026-01-04T02:00:00Z", now)).toBe("expires in 3 d 2 h");
    expect(timeLeft("2025-12-31T23:59:30Z", now)).toBe("expired 30 s ago");
  });

  it("shows an approver only what their groups may decide (admin and no-keys: everything)", () => {
    const finance = approval("f", null, "2026-01-01T00:00:00Z", { approvers: ["finance"] });
    const open = approval("o", null, "2026-01-01T00:00:00Z");
    const me = (scope: "admin" | "approve" | "run", groups: string[]) => ({
      name: "k",
      scope,
      groups,
      authenticated: true,
      permissions:
        scope === "run"
          ? (["executions:read"] as const).slice()
          : (["approvals:read", "approvals:decide"] as const).slice(),
    });
    expect(mayDecide(me("approve", ["legal"]), finance)).toBe(false);
    expect(mayDecide(me("approve", ["legal"]), open)).toBe(true);
    expect(mayDecide(me("approve", ["finance"]), finance)).toBe(true);
    expect(mayDecide(me("admin", []), finance)).toBe(true);
    expect(mayDecide(me("run", []), open)).toBe(false);
    expect(mayDecide({ ...me("admin", []), name: null, authenticated: false }, finance)).toBe(true);
  });
});

describe("parseInput", () => {
  it("accepts JSON, reads an empty box as {}, and explains what does not parse", () => {
    expect(parseInput(' {"a": [1, 2]} ')).toEqual({ ok: true, value: { a: [1, 2] } });
    expect(parseInput("")).toEqual({ ok: true, value: {} });
    const bad = parseInput('{"a": 1,}');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toMatch(/^The input is not valid JSON: .+/);
  });
});

describe("matchRoute", () => {
  it("routes the console's paths, decoding ids (execution ids are ARNs)", () => {
    const id = "arn:aws:states:local:000000000000:execution:pay:e/1";
    expect(matchRoute(paths.execution(id))).toEqual({ page: "execution", id });
    expect(matchRoute(paths.machine("order-saga"))).toEqual({
      page: "machine",
      name: "order-saga",
    });
    expect(matchRoute("/console/")).toEqual({ page: "home" });
    expect(matchRoute("/console/approvals")).toEqual({ page: "approvals" });
    expect(matchRoute("/console/executions")).toEqual({ page: "executions" });
    expect(matchRoute("/console/nope/1/2")).toEqual({ page: "not-found", path: "/nope/1/2" });
  });
});
