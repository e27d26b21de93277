import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../engine/core/canonical.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import { sha256 } from "../../runtime/store/canonical.js";
import { eventHash, type ChainIdentity } from "../../runtime/audit/chain.js";
import { checkpointSignerOf } from "../../runtime/audit/checkpoints.js";
import { AUDIT_FORMAT_V1, signedPayload, type AuditTrailer } from "../../runtime/audit/document.js";
import {
  KEPT_IN_REDIS_WARNING,
  verifyAudit,
  type ProblemKind,
} from "../../runtime/audit/verify.js";
import {
  events,
  exportOf,
  external,
  inRedis,
  objects,
  publicKeyPem,
  rewritten,
  serverKey,
  text,
  truncated,
  written,
  type Stored,
} from "./fixture.js";

const key = serverKey.privateKey;
type Lines = Record<string, unknown>[];
const eventOf = (line: Record<string, unknown> | undefined) => line!.event as HistoryEvent;

function verdictOf(lines: (string | Record<string, unknown>)[], pinned = true) {
  return verifyAudit(text(lines), pinned ? { publicKeyPem } : {});
}

function problemOf(lines: (string | Record<string, unknown>)[]) {
  const verdict = verdictOf(lines);
  if (verdict.ok) throw new Error("expected the export not to verify");
  return verdict.problem;
}

/** An ended execution of 5 events (checkpoints at 1 and 5), exported: header, 5 events, trailer. */
const ended = (signer = external) => objects(exportOf(written(events(5), { key }), signer));

describe("verify: an untouched export", () => {
  it("verifies, with checkpoints at event 1, every 32nd event and the terminal one", () => {
    const lines = exportOf(written(events(70), { key }));
    expect(verdictOf(lines)).toEqual({
      ok: true,
      executionArn: expect.any(String),
      head: { eventId: 70, hash: expect.any(String) },
      warnings: [],
    });
    const signed = objects(lines)
      .filter((l) => l.checkpoint !== undefined)
      .map((l) => eventOf(l).id);
    expect(signed).toEqual([1, 32, 64, 70]);
    expect(objects(lines).at(-1)).toMatchObject({ keptInRedis: false, checkpointEvery: 32 });
  });

  it("warns when no key is pinned, and when the key is kept in Redis", () => {
    const unpinned = verdictOf(ended(), false);
    expect(unpinned.ok && unpinned.warnings).toEqual([
      "no public key given: the signature was checked with the key inside the file",
    ]);
    const redis = verdictOf(objects(exportOf(written(events(5)), inRedis)));
    expect(redis.ok && redis.warnings).toEqual([KEPT_IN_REDIS_WARNING]);
    expect(KEPT_IN_REDIS_WARNING).toContain(
      "signed with a key kept in Redis: proves only that the file was not changed after export",
    );
  });

  it("says which events come after the last checkpoint of a running execution", () => {
    const verdict = verdictOf(exportOf(written(events(40, false), { key })));
    expect(verdict.ok && verdict.warnings).toEqual([
      expect.stringContaining("events 33..40 come after the last signed checkpoint (event 32)"),
    ]);
  });

  it("takes an execution written before the key was set: the first checkpoint vouches for what came before", () => {
    const verdict = verdictOf(exportOf(written(events(10), { key, unsignedUntil: 6 })));
    expect(verdict.ok && verdict.warnings).toEqual([
      expect.stringContaining("events 1..9 were written before checkpoints were signed"),
    ]);
  });
});

describe("verify: the header is signed (issue 44, finding 5)", () => {
  const fields: [string, (header: Record<string, unknown>) => void, string][] = [
    [
      "execution.input",
      (h) => ((h.execution as Record<string, unknown>).input = { n: 1 }),
      "changed",
    ],
    [
      "execution.output",
      (h) => ((h.execution as Record<string, unknown>).output = { done: false }),
      "changed",
    ],
    [
      "execution.status",
      (h) => ((h.execution as Record<string, unknown>).status = "FAILED"),
      "changed",
    ],
    [
      "execution.stoppedAt",
      (h) => delete (h.execution as Record<string, unknown>).stoppedAt,
      "removed",
    ],
    ["execution.error", (h) => ((h.execution as Record<string, unknown>).error = "Evil"), "added"],
    ["exportedAt", (h) => (h.exportedAt = "2030-01-01T00:00:00.000Z"), "changed"],
    ["versions", (h) => delete h.versions, "removed"],
    ["execution", (h) => (h.execution = null), "changed"],
    ["note", (h) => (h.note = "approved by the board"), "added"],
  ];

  it.each(fields)("names %s when it is %s", (path, tamper, how) => {
    const lines = ended();
    tamper(lines[0]!);
    const problem = problemOf(lines);
    expect(problem.kind).toBe("header");
    expect(problem.message).toMatch(
      new RegExp(`^header changed: .*\\b${path.replace(".", "\\.")}`),
    );
    if (path !== "execution") expect(problem.message).toContain(`${path} ${how}`);
  });

  it("names a signature that no longer covers the header when its digests were edited to match", () => {
    const lines = ended();
    (lines[0]!.execution as Record<string, unknown>).input = { n: 1 };
    const trailer = lines.at(-1) as unknown as AuditTrailer;
    (trailer.header!.execution as Record<string, string>).input = sha256(canonicalJson({ n: 1 }));
    expect(problemOf(lines).kind).toBe("signature");
  });

  it("does not take a format-2 export relabelled as format 1", () => {
    const lines = ended();
    lines[0]!.format = AUDIT_FORMAT_V1;
    expect(problemOf(lines).kind).toBe("signature");
  });

  it("still verifies a format-1 export (header unsigned), and says what it does not cover", () => {
    const lines = ended();
    lines[0]!.format = AUDIT_FORMAT_V1;
    const t = lines.at(-1) as unknown as AuditTrailer;
    const v1 = {
      type: "trailer",
      executionArn: t.executionArn,
      genesis: t.genesis,
      head: t.head,
      algorithm: "Ed25519",
      publicKey: t.publicKey,
      signature: sign(null, signedPayload(t, AUDIT_FORMAT_V1), key).toString("base64"),
    };
    const old = [...lines.slice(1, -1).map(({ checkpoint: _, ...l }) => l)];
    const verdict = verdictOf([lines[0]!, ...old, v1]);
    expect(verdict.ok && verdict.warnings).toEqual([
      expect.stringContaining(
        "format stepwise-audit/1: the signature covers the events' chain, not the header",
      ),
    ]);
    // Format 1's header is not covered: that is what format 2 fixes.
    (lines[0]!.execution as Record<string, unknown>).input = { n: 1 };
    expect(verdictOf([lines[0]!, ...old, v1]).ok).toBe(true);
  });
});

describe("verify: the file changed after export", () => {
  const tamperings: [string, (lines: Lines) => void, ProblemKind, number?][] = [
    [
      "an event edited",
      (l) => (eventOf(l[3]).stateEnteredEventDetails = { name: "Evil", input: "{}" }),
      "changed",
      3,
    ],
    ["an event removed", (l) => l.splice(2, 1), "removed", 2],
    ["the last event removed", (l) => l.splice(5, 1), "removed", 5],
    ["two events swapped", (l) => ([l[2], l[3]] = [l[3]!, l[2]!]), "reordered", 2],
    [
      "an event inserted (duplicate id)",
      (l) => l.splice(3, 0, { ...l[3], event: { ...eventOf(l[3]), type: "PassStateExited" } }),
      "inserted",
      3,
    ],
    [
      "an event appended past the signed head",
      (l) => l.splice(6, 0, { ...l[5], event: { ...eventOf(l[5]), id: 6, previousEventId: 5 } }),
      "inserted",
      6,
    ],
    [
      "the definition changed",
      (l) => {
        const changed = { StartAt: "A", States: { A: { Type: "Succeed" } } };
        l[0]!.definition = changed;
        (l[0]!.identity as ChainIdentity).definitionHash = sha256(canonicalJson(changed));
      },
      "definition",
    ],
    [
      "the definition changed, its hash not",
      (l) => (l[0]!.definition = { StartAt: "B", States: { B: { Type: "Succeed" } } }),
      "definition",
    ],
    [
      "an event edited and every later hash recomputed",
      (l) => {
        eventOf(l[2]).timestamp = "2020-01-01T00:00:00.000Z";
        let prev = (l[6] as unknown as AuditTrailer).genesis;
        for (const line of l.slice(1, 6)) prev = line.hash = eventHash(prev, eventOf(line));
      },
      "checkpoint",
      5,
    ],
    ["a checkpoint taken out", (l) => delete l[5]!.checkpoint, "checkpoint", 5],
    [
      "a checkpoint moved to another event",
      (l) => (l[5]!.checkpoint = l[1]!.checkpoint),
      "checkpoint",
      5,
    ],
    [
      "the signature replaced",
      (l) => {
        const other = generateKeyPairSync("ed25519").privateKey;
        const t = l[6] as unknown as AuditTrailer;
        t.signature = sign(null, signedPayload(t), other).toString("base64");
      },
      "signature",
    ],
    ["the status in the trailer changed", (l) => (l[6]!.status = "RUNNING"), "signature"],
    ["the key declared as kept in Redis", (l) => (l[6]!.keptInRedis = true), "signature"],
  ];

  it.each(tamperings)("names %s", (_name, tamper, kind, eventId) => {
    const lines = ended();
    tamper(lines);
    const problem = problemOf(lines);
    expect(problem.kind).toBe(kind);
    expect(problem.eventId).toBe(eventId);
  });

  it("names the head when the key is kept in Redis (no checkpoints) and hashes were recomputed in the file", () => {
    const lines = ended(inRedis);
    eventOf(lines[2]).timestamp = "2020-01-01T00:00:00.000Z";
    let prev = (lines[6] as unknown as AuditTrailer).genesis;
    for (const line of lines.slice(1, 6)) prev = line.hash = eventHash(prev, eventOf(line));
    expect(problemOf(lines)).toMatchObject({ kind: "head", eventId: 5 });
  });

  it("names a signature made with another key (and its public key) as replaced when a key is pinned", () => {
    const lines = ended();
    const other = generateKeyPairSync("ed25519");
    const t = lines[6] as unknown as AuditTrailer;
    t.signature = sign(null, signedPayload(t), other.privateKey).toString("base64");
    t.publicKey = other.publicKey.export({ type: "spki", format: "pem" }) as string;
    // The checkpoints were signed with the server's key, not the one in the file.
    expect(verifyAudit(text(lines))).toMatchObject({ ok: false, problem: { kind: "checkpoint" } });
    expect(problemOf(lines)).toMatchObject({
      kind: "signature",
      message: expect.stringContaining("another key"),
    });
  });

  it("calls a file that is not an export malformed", () => {
    expect(verifyAudit("not json").ok).toBe(false);
    expect(problemOf(ended().slice(0, -1)).kind).toBe("malformed");
    const lines = ended();
    delete lines[6]!.header;
    expect(problemOf(lines).kind).toBe("malformed");
  });
});

describe("verify: history rewritten in Redis (issue 44, finding 6)", () => {
  const later = (e: HistoryEvent) => (e.timestamp = "2020-01-01T00:00:00.000Z");

  it("names event 3 edited, every later check and hh recomputed, as not matching the terminal checkpoint", () => {
    const stored = rewritten(written(events(10), { key }), 2, later);
    expect(problemOf(exportOf(stored))).toMatchObject({
      kind: "checkpoint",
      eventId: 10,
      message: expect.stringContaining("an event among 2..10 was changed"),
    });
  });

  it("names the same rewrite with the signatures dropped as a missing checkpoint", () => {
    const stored = rewritten(written(events(10), { key }), 2, later, "drop");
    // The one at event 1 is before the change, and stays.
    expect(problemOf(exportOf(stored))).toMatchObject({ kind: "checkpoint", eventId: 10 });
    const all = rewritten(written(events(10), { key }), 0, later, "drop");
    expect(problemOf(exportOf(all))).toMatchObject({
      kind: "checkpoint",
      message: expect.stringContaining("no event carries a signed checkpoint"),
    });
  });

  it("names an edit in the middle of a long history at the next checkpoint", () => {
    const stored = rewritten(written(events(70, false), { key }), 39, later);
    expect(problemOf(exportOf(stored))).toMatchObject({
      kind: "checkpoint",
      eventId: 64,
      message: expect.stringContaining("33..64"),
    });
  });

  it("names the last event dropped with hc and hh reset: the execution ended, its history does not say how", () => {
    const stored = truncated(written(events(10), { key }), 9);
    expect(problemOf(exportOf(stored))).toMatchObject({
      kind: "removed",
      eventId: 10,
      message: expect.stringContaining("without ExecutionSucceeded"),
    });
  });

  it("cannot see a rollback of the open tail with the status set back (the limit the README states)", () => {
    const rolledBack: Stored = { ...truncated(written(events(10), { key }), 9), st: "RUNNING" };
    const verdict = verdictOf(exportOf(rolledBack));
    expect(verdict.ok && verdict.warnings).toEqual([
      expect.stringContaining("events 2..9 come after the last signed checkpoint (event 1)"),
    ]);
  });

  it("verifies every rewrite when the key is kept in Redis, and says what that proves", () => {
    const stored = rewritten(written(events(10)), 2, later);
    const verdict = verdictOf(exportOf(stored, inRedis));
    expect(verdict.ok && verdict.warnings).toEqual([KEPT_IN_REDIS_WARNING]);
  });

  it("names checkpoints signed with another key than the export's", () => {
    const other = generateKeyPairSync("ed25519").privateKey;
    const stored = written(events(5), { key: other });
    expect(problemOf(exportOf(stored))).toMatchObject({ kind: "checkpoint", eventId: 1 });
    // A writer without the key (a process started without STEPWISE_AUDIT_KEY).
    const mixed = written(events(5), { key });
    const unsigned = written(events(5));
    mixed.entries[4] = unsigned.entries[4]!;
    expect(problemOf(exportOf(mixed))).toMatchObject({ kind: "checkpoint", eventId: 5 });
  });

  it("signs with the same recipe the runtime's writers use", () => {
    const a = written(events(5), { key, commit: 1 });
    const b = written(events(5), { key, commit: 5 });
    expect(a.entries).toEqual(b.entries);
    expect(checkpointSignerOf(key)(1, a.hh)).toMatch(/^[A-Za-z0-9_-]{86}$/);
  });
});
