import { createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { canonicalJson } from "../../engine/core/canonical.js";
import type { HistoryEvent, HistoryEventType } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import { sha256 } from "../../runtime/store/canonical.js";
import {
  chainEvents,
  eventCheck,
  eventHash,
  genesisHash,
  rechain,
  splitHash,
  withHash,
  type ChainIdentity,
} from "../../runtime/audit/chain.js";
import { checkpointSignerOf } from "../../runtime/audit/checkpoints.js";
import { AUDIT_FORMAT, type AuditHeader } from "../../runtime/audit/document.js";
import { auditLines } from "../../runtime/audit/export.js";
import type { AuditSigner } from "../../runtime/audit/signing.js";
import { versionHash, type VersionLink } from "../../runtime/audit/versions.js";

/**
 * A history as Redis holds it, written the way the runtime writes it (chain.ts,
 * checkpoints.ts), and exported the way export.ts exports it (`auditLines`),
 * with the attacker's moves of issue 44 on the stored form: someone who can
 * write to Redis but does not hold the key.
 */
export const definition = { StartAt: "A", States: { A: { Type: "Pass", End: true } } };
export const identity: ChainIdentity = {
  executionArn: "arn:aws:states:local:000000000000:execution:m:x",
  stateMachineVersionArn: "arn:aws:states:local:000000000000:stateMachine:m:1",
  definitionHash: sha256(canonicalJson(definition)),
};

const link = {
  name: "m",
  version: 1,
  definitionHash: identity.definitionHash,
  createdAt: "2026-01-01T00:00:00.000Z",
  createdBy: "alice",
  previous: "",
};
export const versions: VersionLink[] = [{ ...link, hash: versionHash(link) }];

export function signerOf(privateKey: KeyObject, keptInRedis = false): AuditSigner {
  const publicKeyPem = createPublicKey(privateKey).export({
    type: "spki",
    format: "pem",
  }) as string;
  return { privateKey, publicKeyPem, keptInRedis };
}

export const serverKey = generateKeyPairSync("ed25519");
export const publicKeyPem = serverKey.publicKey.export({ type: "spki", format: "pem" }) as string;
/** STEPWISE_AUDIT_KEY: a key file Redis does not hold. */
export const external = signerOf(serverKey.privateKey);
/** No STEPWISE_AUDIT_KEY: the key Redis keeps (anyone who writes Redis can read it). */
export const inRedis = signerOf(serverKey.privateKey, true);

/** n events: ExecutionStarted, Pass states, and (ended) ExecutionSucceeded as event n. */
export function events(n: number, ended = true): HistoryEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const id = i + 1;
    const type: HistoryEventType =
      id === 1
        ? "ExecutionStarted"
        : ended && id === n
          ? "ExecutionSucceeded"
          : id % 2 === 0
            ? "PassStateEntered"
            : "PassStateExited";
    const details =
      id === 1
        ? { executionStartedEventDetails: { input: '{"n":0}' } }
        : type === "ExecutionSucceeded"
          ? { executionSucceededEventDetails: { output: '{"done":true}' } }
          : {
              [type === "PassStateEntered"
                ? "stateEnteredEventDetails"
                : "stateExitedEventDetails"]: { name: `S${id}`, input: `{"n":${id}}` },
            };
    return {
      id,
      previousEventId: i,
      timestamp: new Date(1_700_000_000_000 + i).toISOString(),
      type,
      ...details,
    } as HistoryEvent;
  });
}

/** What Redis holds of one execution: the history list, `hc`/`hh`, the status, the record. */
export interface Stored {
  entries: string[];
  hh: string;
  st: string;
  record: Record<string, Json>;
}

/**
 * The history written in commits of `commit` events by writers that sign with
 * `key` (none: STEPWISE_AUDIT_KEY unset). `unsignedUntil`: the events up to it
 * written before the key was set.
 */
export function written(
  history: HistoryEvent[],
  options: { key?: KeyObject; commit?: number; unsignedUntil?: number } = {},
): Stored {
  const commit = options.commit ?? 3;
  let hh = genesisHash(identity);
  const entries: string[] = [];
  for (let i = 0; i < history.length; i += commit) {
    const batch = history.slice(i, i + commit);
    const signs = options.key && batch[0]!.id > (options.unsignedUntil ?? 0);
    const chained = chainEvents(
      hh,
      batch,
      undefined,
      signs ? checkpointSignerOf(options.key!) : undefined,
    );
    entries.push(...chained.stored);
    hh = chained.head;
  }
  const last = history.at(-1);
  const ended = last?.type === "ExecutionSucceeded";
  return {
    entries,
    hh,
    st: ended ? "SUCCEEDED" : "RUNNING",
    record: {
      executionId: identity.executionArn,
      name: "x",
      stateMachine: "m",
      version: 1,
      status: ended ? "SUCCEEDED" : "RUNNING",
      input: { n: 0 },
      ...(ended ? { output: { done: true }, stoppedAt: last.timestamp } : {}),
      startedAt: history[0]?.timestamp ?? "",
    },
  };
}

/** The export the server makes of what Redis holds (export.ts, without Redis). */
export function exportOf(stored: Stored, signer: AuditSigner = external): string[] {
  const header: AuditHeader = {
    type: "header",
    format: AUDIT_FORMAT,
    exportedAt: "2026-06-01T00:00:00.000Z",
    execution: stored.record,
    identity: { ...identity },
    definition,
    versions,
  };
  const genesis = genesisHash(identity);
  const entries = stored.entries.map((s) => splitHash(JSON.parse(s) as HistoryEvent));
  return auditLines(signer, {
    header,
    genesis,
    events: rechain(genesis, entries),
    head: { eventId: stored.entries.length, hash: stored.hh },
    status: stored.st,
  });
}

/** The parts of a stored entry: the event and its `hash` field (check, or check.signature). */
export function entryOf(entry: string): { event: HistoryEvent; hash: string } {
  const { event, hash } = splitHash(JSON.parse(entry) as HistoryEvent);
  return { event, hash: hash! };
}

/**
 * Issue 44, finding 6: an event changed in Redis, the check of it and of every
 * later event recomputed and `hh` set, as anyone who knows the (public) recipe
 * can. The signatures after the check cannot be recomputed: `signatures` says
 * what the attacker does with those from the changed event on (keep them as they
 * are, or drop them).
 */
export function rewritten(
  stored: Stored,
  index: number,
  change: (event: HistoryEvent) => void,
  signatures: "keep" | "drop" = "keep",
): Stored {
  const entries = stored.entries.map(entryOf);
  change(entries[index]!.event);
  let hh = genesisHash(identity);
  const out = entries.map(({ event, hash }, i) => {
    hh = eventHash(hh, event);
    const dot = hash.indexOf(".");
    const signature = dot < 0 || (signatures === "drop" && i >= index) ? "" : hash.slice(dot);
    return withHash(JSON.stringify(event), eventCheck(hh) + signature);
  });
  return { ...stored, entries: out, hh };
}

/** Finding 6's other move: the last events dropped, `hc` and `hh` reset to the event before. */
export function truncated(stored: Stored, keep: number): Stored {
  let hh = genesisHash(identity);
  for (const entry of stored.entries.slice(0, keep)) hh = eventHash(hh, entryOf(entry).event);
  return { ...stored, entries: stored.entries.slice(0, keep), hh };
}

/** Lines as objects, to tamper with the file; and back to text. */
export const objects = (lines: string[]) =>
  lines.map((l) => JSON.parse(l) as Record<string, unknown>);
export const text = (lines: (string | Record<string, unknown>)[]) =>
  lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n");

/** A Pass, a Map of Passes and a Pass: the chain crosses a Map's children (integration tests). */
export const MAP_OF_PASSES = {
  StartAt: "Prepare",
  States: {
    Prepare: { Type: "Pass", Next: "Fan" },
    Fan: {
      Type: "Map",
      ItemsPath: "$.items",
      ItemProcessor: { StartAt: "Double", States: { Double: { Type: "Pass", End: true } } },
      ResultPath: "$.doubled",
      Next: "Done",
    },
    Done: { Type: "Pass", End: true },
  },
};
