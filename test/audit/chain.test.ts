import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../engine/core/canonical.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import { sha256 } from "../../runtime/canonical.js";
import {
  anchoredGenesis,
  canonicalStored,
  chainEvents,
  eventCheck,
  rechain,
  eventHash,
  genesisHash,
  splitHash,
  type ChainIdentity,
  UNANCHORED,
} from "../../runtime/audit/chain.js";
import { signedPayload, type AuditTrailer } from "../../runtime/audit/document.js";
import { verifyAudit, type ProblemKind } from "../../runtime/audit/verify.js";
import { brokenVersionLink, versionHash, type VersionLink } from "../../runtime/audit/versions.js";

const definition = { StartAt: "A", States: { A: { Type: "Pass", End: true } } };
const identity: ChainIdentity = {
  executionArn: "arn:aws:states:local:000000000000:execution:m:x",
  stateMachineVersionArn: "arn:aws:states:local:000000000000:stateMachine:m:1",
  definitionHash: sha256(canonicalJson(definition)),
};

function events(n: number): HistoryEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    previousEventId: i,
    timestamp: new Date(1_700_000_000_000 + i).toISOString(),
    type: "PassStateEntered",
    stateEnteredEventDetails: { name: `S${i}`, input: `{"n":${i}}` },
  }));
}

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const publicKeyPem = publicKey.export({ type: "spki", format: "pem" }) as string;

/** An export as runtime/audit/export.ts writes one, as lines of objects (to tamper with). */
function exported(n = 5): Record<string, unknown>[] {
  const history = events(n);
  const genesis = genesisHash(identity);
  const { stored, head } = chainEvents(genesis, history);
  const unsigned = {
    executionArn: identity.executionArn,
    genesis,
    head: { eventId: n, hash: head },
  };
  const trailer: AuditTrailer = {
    type: "trailer",
    ...unsigned,
    algorithm: "Ed25519",
    publicKey: publicKeyPem,
    signature: sign(null, signedPayload(unsigned), privateKey).toString("base64"),
  };
  return [
    {
      type: "header",
      format: "stepwise-audit/1",
      identity: { ...identity },
      definition,
      execution: {},
    },
    ...rechain(
      genesis,
      stored.map((s) => splitHash(JSON.parse(s) as HistoryEvent)),
    ).map(({ event, hash }) => ({ type: "event", event, hash })),
    trailer as unknown as Record<string, unknown>,
  ];
}

const text = (lines: Record<string, unknown>[]) => lines.map((l) => JSON.stringify(l)).join("\n");
const eventOf = (line: Record<string, unknown> | undefined) => line!.event as HistoryEvent;

function problemOf(lines: Record<string, unknown>[], options = {}) {
  const verdict = verifyAudit(text(lines), options);
  if (verdict.ok) throw new Error("expected the export not to verify");
  return verdict.problem;
}

describe("the history hash chain (pure)", () => {
  it("hashes the event as stored: undefined fields count as JSON.stringify leaves them", () => {
    const value = { b: 1, a: { d: undefined, c: [1, undefined, "x"] }, e: "é\u2028" };
    expect(canonicalStored(value)).toBe(canonicalJson(JSON.parse(JSON.stringify(value)) as Json));
  });

  it("is SHA-256 over the previous hash's hex and the event's RFC 8785 JSON (the recipe a third party follows)", () => {
    const [event] = events(1);
    const genesis = genesisHash(identity);
    expect(genesis).toBe(sha256(canonicalJson({ ...identity })));
    expect(eventHash(genesis, event!)).toBe(
      sha256(genesis + canonicalJson(event as unknown as Json)),
    );
  });

  it("chains each event on the previous hash, starting from the identity's genesis", () => {
    const history = events(3);
    const genesis = genesisHash(identity);
    const { stored, head } = chainEvents(genesis, history);
    const h1 = eventHash(genesis, history[0]!);
    const h2 = eventHash(h1, history[1]!);
    expect(head).toBe(eventHash(h2, history[2]!));
    // Entries keep the check of their hash; read back, the chain recomputes the hashes.
    expect(splitHash(JSON.parse(stored[1]!) as HistoryEvent)).toEqual({
      event: history[1],
      hash: eventCheck(h2),
    });
    expect(eventCheck(h2)).toMatch(/^[A-Za-z0-9_-]{11}$/);
    const read = stored.map((s) => splitHash(JSON.parse(s) as HistoryEvent));
    expect(rechain(genesis, read).map((e) => e.hash)).toEqual([h1, h2, head]);
    // An event changed in storage keeps its check (no verifier takes it for its hash);
    // one an earlier build stored with its full hash keeps that.
    const changed = {
      ...read[1]!,
      event: { ...read[1]!.event, timestamp: "2020-01-01T00:00:00.000Z" },
    };
    expect(rechain(genesis, [read[0]!, changed]).map((e) => e.hash)).toEqual([h1, eventCheck(h2)]);
    const full = { ...read[1]!, hash: h2 };
    expect(
      rechain(genesis, [read[0]!, full, { ...read[2]!, hash: undefined }]).map((e) => e.hash),
    ).toEqual([h1, h2, head]);
    // Chaining in two commits gives what one commit gives: the chain follows the ids, not the commits.
    const first = chainEvents(genesis, history.slice(0, 2));
    expect(chainEvents(first.head, history.slice(2)).head).toBe(head);
  });

  it("anchors an export on the genesis the record's `hg` names: its check, a full genesis, or none", () => {
    const genesis = genesisHash(identity);
    expect(anchoredGenesis(eventCheck(genesis), identity)).toBe(genesis);
    // Records written before the check keep their whole genesis, and it is used as it is.
    expect(anchoredGenesis(genesis, { ...identity, definitionHash: "" })).toBe(genesis);
    // An identity changed in storage does not hash to the check: the check is signed,
    // and verify names the genesis.
    const other = { ...identity, definitionHash: sha256("something else") };
    expect(anchoredGenesis(eventCheck(genesis), other)).toBe(eventCheck(genesis));
    // Started before the chain existed.
    expect(anchoredGenesis(null, identity)).toBe(UNANCHORED);
  });

  it("verifies an untouched export, with and without a pinned public key", () => {
    expect(verifyAudit(text(exported()), { publicKeyPem })).toMatchObject({
      ok: true,
      head: { eventId: 5 },
      warnings: [],
    });
    const unpinned = verifyAudit(text(exported()));
    expect(unpinned.ok && unpinned.warnings).toHaveLength(1);
  });

  const tamperings: [string, (lines: Record<string, unknown>[]) => void, ProblemKind, number?][] = [
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
      "head",
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
  ];

  it.each(tamperings)("names %s", (_name, tamper, kind, eventId) => {
    const lines = exported();
    tamper(lines);
    const problem = problemOf(lines, { publicKeyPem });
    expect(problem.kind).toBe(kind);
    expect(problem.eventId).toBe(eventId);
  });

  it("names a signature made with another key (and its public key) as replaced when a key is pinned", () => {
    const lines = exported();
    const other = generateKeyPairSync("ed25519");
    const t = lines[6] as unknown as AuditTrailer;
    t.signature = sign(null, signedPayload(t), other.privateKey).toString("base64");
    t.publicKey = other.publicKey.export({ type: "spki", format: "pem" }) as string;
    // Self-consistent on its own...
    expect(verifyAudit(text(lines)).ok).toBe(true);
    // ...but not the server's key.
    expect(problemOf(lines, { publicKeyPem })).toMatchObject({
      kind: "signature",
      message: expect.stringContaining("another key"),
    });
  });

  it("calls a file that is not an export malformed", () => {
    expect(verifyAudit("not json").ok).toBe(false);
    expect(problemOf(exported().slice(0, -1)).kind).toBe("malformed");
  });
});

describe("the version chain (pure)", () => {
  const links: VersionLink[] = [];
  for (const [version, createdBy] of [
    [1, "alice"],
    [2, ""],
    [3, "bob"],
  ] as const) {
    const link = {
      name: "m",
      version,
      definitionHash: sha256(String(version)),
      createdAt: `2026-01-0${version}T00:00:00.000Z`,
      createdBy,
      previous: links.at(-1)?.hash ?? "",
    };
    links.push({ ...link, hash: versionHash(link) });
  }

  it("holds when each version hashes and names the one before", () => {
    expect(brokenVersionLink(links)).toBeUndefined();
  });

  it("names the first version whose record changed, or that skips its predecessor", () => {
    expect(
      brokenVersionLink(links.map((l, i) => (i === 1 ? { ...l, createdBy: "eve" } : l))),
    ).toMatchObject({ version: 2 });
    expect(brokenVersionLink([links[0]!, links[2]!])).toMatchObject({ version: 3 });
  });
});
