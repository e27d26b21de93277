import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../engine/core/canonical.js";
import type { HistoryEvent, HistoryEventType } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import { sha256 } from "../../runtime/store/canonical.js";
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
import {
  CHECKPOINT_EVERY,
  checkpointHolds,
  checkpointSignerOf,
  needsCheckpoint,
} from "../../runtime/audit/checkpoints.js";
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

  it("keeps a checkpoint's signature after the check, and gives it back with the recomputed hash", () => {
    const history = events(3);
    const genesis = genesisHash(identity);
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const { stored, head } = chainEvents(
      genesis,
      history,
      undefined,
      checkpointSignerOf(privateKey),
    );
    const read = stored.map((s) => splitHash(JSON.parse(s) as HistoryEvent));
    // Event 1 is a checkpoint; 2 and 3 (not terminal, not a multiple of 32) are not.
    expect(read[0]!.hash).toMatch(/^[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]{86}$/);
    expect(read[1]!.hash).toMatch(/^[A-Za-z0-9_-]{11}$/);
    const [first, second, third] = rechain(genesis, read);
    const h1 = eventHash(genesis, history[0]!);
    expect(first).toEqual({ event: history[0], hash: h1, checkpoint: first!.checkpoint });
    expect(checkpointHolds(1, h1, first!.checkpoint!, publicKey)).toBe(true);
    expect(checkpointHolds(1, head, first!.checkpoint!, publicKey)).toBe(false);
    expect(second!.checkpoint).toBeUndefined();
    expect(third!.hash).toBe(head);
    // A changed event keeps its stored check (not the signature) in place of its hash.
    const changed = {
      ...read[0]!,
      event: { ...read[0]!.event, timestamp: "2020-01-01T00:00:00.000Z" },
    };
    expect(rechain(genesis, [changed])[0]!.hash).toBe(eventCheck(h1));
  });

  it("puts checkpoints at event 1, every 32nd event and each terminal event", () => {
    const at = (id: number, type: HistoryEventType = "PassStateEntered") =>
      needsCheckpoint({ id, type });
    expect([1, 2, 31, 32, 33, 64, 65].filter((id) => at(id))).toEqual([1, 32, 64]);
    for (const type of [
      "ExecutionSucceeded",
      "ExecutionFailed",
      "ExecutionAborted",
      "ExecutionTimedOut",
    ] as const) {
      expect(at(7, type)).toBe(true);
    }
    expect(at(7, "ExecutionRedriven")).toBe(false);
    expect(CHECKPOINT_EVERY).toBe(32);
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
