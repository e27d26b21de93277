import { sign } from "node:crypto";
import type { Json } from "../../engine/core/json.js";
import { RuntimeError, type ExecutionRecord } from "../contract/index.js";
import { shortId, stateMachineArn } from "../store/ids.js";
import { EXECUTION_FIELDS, storedFields, VERSION_FIELDS } from "../store/fields.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";
import { readHistoryEntries } from "../payloads/history-payloads.js";
import { anchoredGenesis, rechain, UNANCHORED, type Rechained } from "./chain.js";
import { CHECKPOINT_EVERY } from "./checkpoints.js";
import {
  AUDIT_FORMAT,
  headerDigests,
  signedPayload,
  type AuditEventLine,
  type AuditHeader,
  type AuditTrailer,
  type SignedFields,
} from "./document.js";
import type { AuditSigner } from "./signing.js";
import type { VersionLink } from "./versions.js";

const BATCH = 1000;

/** The machine's version links up to `version` (those that have one: audit/versions.ts). */
async function versionChain(
  client: RedisClient,
  keys: Keys,
  name: string,
  upTo: number,
): Promise<VersionLink[]> {
  const pipeline = client.redis.pipeline();
  const fields = storedFields(VERSION_FIELDS, [
    "definitionHash",
    "createdAt",
    "createdBy",
    "previousVersionHash",
    "versionHash",
  ]);
  for (let v = 1; v <= upTo; v++) pipeline.hmget(keys.machineVersion(name, v), ...fields);
  const links: VersionLink[] = [];
  for (const [i, [, row]] of ((await pipeline.exec()) ?? []).entries()) {
    const [definitionHash, createdAt, createdBy, previous, hash] = row as (string | null)[];
    if (!definitionHash || !createdAt || !hash) continue;
    links.push({
      name,
      version: i + 1,
      definitionHash,
      createdAt,
      createdBy: createdBy ?? "",
      previous: previous ?? "",
      hash,
    });
  }
  return links;
}

/**
 * The audit export of an execution (document.ts has the format), as lines
 * without their newlines. The count, head, genesis and status are read together
 * (one HMGET: the scripts that append history set the count and head in one
 * step, and the commit that ends an execution its status with its last event),
 * and exactly those events are exported, so the signed head is the last
 * exported event's hash even while the execution goes on.
 */
export async function exportAudit(
  client: RedisClient,
  keys: Keys,
  signer: AuditSigner,
  record: ExecutionRecord,
): Promise<string[]> {
  const exec = shortId(record.executionId);
  const [hcText, hh, hg, st] = await client.redis.hmget(
    keys.execution(exec),
    ...storedFields(EXECUTION_FIELDS, ["historyCount", "historyHead", "genesisCheck", "status"]),
  );
  if (hcText === null) {
    throw new RuntimeError(
      "ExecutionDoesNotExist",
      `Execution '${record.executionId}' does not exist`,
    );
  }
  const count = Number(hcText);
  const [def, definitionHash] = await client.redis.hmget(
    keys.machineVersion(record.stateMachine, record.version),
    ...storedFields(VERSION_FIELDS, ["definition", "definitionHash"]),
  );
  const header: AuditHeader = {
    type: "header",
    format: AUDIT_FORMAT,
    exportedAt: new Date().toISOString(),
    execution: record as unknown as Json,
    identity: {
      executionArn: record.executionId,
      stateMachineVersionArn: stateMachineArn(record.stateMachine, record.version),
      definitionHash: definitionHash ?? "",
    },
    definition: def ? (JSON.parse(def) as Json) : null,
  };
  const versions = await versionChain(client, keys, record.stateMachine, record.version);
  if (versions.length > 0) header.versions = versions;
  const genesis = anchoredGenesis(hg ?? null, header.identity);
  const entries: Awaited<ReturnType<typeof readHistoryEntries>> = [];
  for (let from = 0; from < count; from += BATCH) {
    const to = Math.min(count, from + BATCH) - 1;
    const raw = await client.redis.lrangeBuffer(keys.history(exec), from, to);
    entries.push(...(await readHistoryEntries(client, keys, exec, raw)));
  }
  return auditLines(signer, {
    header,
    genesis,
    events: rechain(genesis, entries),
    head: { eventId: count, hash: hh ?? UNANCHORED },
    status: st ?? "RUNNING",
  });
}

/**
 * The lines of an export from what was read (pure): the header, an event line
 * per event (with its checkpoint, if it has one), and the signed trailer.
 */
export function auditLines(
  signer: AuditSigner,
  read: {
    header: AuditHeader;
    genesis: string;
    events: readonly Rechained[];
    head: { eventId: number; hash: string };
    status: string;
  },
): string[] {
  const headerLine = JSON.stringify(read.header);
  const lines = [headerLine];
  for (const { event, hash, checkpoint } of read.events) {
    const line: AuditEventLine = { type: "event", event, hash };
    if (checkpoint !== undefined) line.checkpoint = checkpoint;
    lines.push(JSON.stringify(line));
  }
  const signed: SignedFields = {
    executionArn: read.header.identity.executionArn,
    genesis: read.genesis,
    head: read.head,
    status: read.status,
    header: headerDigests(JSON.parse(headerLine) as Record<string, Json>),
    keptInRedis: signer.keptInRedis,
  };
  if (!signer.keptInRedis) signed.checkpointEvery = CHECKPOINT_EVERY;
  const trailer: AuditTrailer = {
    type: "trailer",
    ...signed,
    algorithm: "Ed25519",
    publicKey: signer.publicKeyPem,
    signature: sign(null, signedPayload(signed), signer.privateKey).toString("base64"),
  };
  lines.push(JSON.stringify(trailer));
  return lines;
}
