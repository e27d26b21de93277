import { generateKeyPairSync, sign } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseApiKeys } from "../../api/auth.js";
import { buildServer } from "../../api/server.js";
import { main } from "../../cli/main.js";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import { signedPayload, type AuditTrailer } from "../../runtime/audit/document.js";
import { KEPT_IN_REDIS_WARNING, verifyAudit, type Verdict } from "../../runtime/audit/verify.js";
import { versionHash } from "../../runtime/audit/versions.js";
import { loadAuditSigner } from "../../runtime/audit/signing.js";
import { RedisClient } from "../../runtime/store/redis.js";
import { pack, unpack } from "../../runtime/store/codec.js";
import { shortId } from "../../runtime/store/ids.js";
import {
  createMachine,
  fullHistory,
  harness,
  historyProblems,
  type Harness,
  ONE_SHARD,
} from "./helpers.js";
import { MAP_OF_PASSES } from "../audit/fixture.js";

// The chain as the Redis runtime writes it: exports of real executions verify, and
// data changed in Redis (or in the file) after the fact is caught and named.
const definition = MAP_OF_PASSES;

let h: Harness;
let redis: Redis;
let dir: string;
let publicKeyPem: string;
beforeAll(async () => {
  // Reads one shard's keys by name (helpers.ts ONE_SHARD).
  h = await harness(ONE_SHARD);
  redis = new Redis(h.redisUrl);
  dir = mkdtempSync(join(tmpdir(), "stepwise-audit-"));
  await h.startWorker();
  await createMachine(h.runtime, "audited", definition);
  publicKeyPem = await h.runtime.auditPublicKey();
});
afterAll(async () => {
  redis.disconnect();
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(name: string, items = 3): Promise<string> {
  const input = { items: Array.from({ length: items }, (_, n) => ({ n })) };
  const { executionId } = await h.runtime.startExecution("audited", { input, name });
  const record = await h.runtime.waitForExecution(executionId, 120_000);
  expect(record.status).toBe("SUCCEEDED");
  return executionId;
}

async function verified(executionId: string): Promise<Verdict> {
  return verifyAudit((await h.runtime.exportAudit(executionId)).join("\n"), { publicKeyPem });
}

const historyKey = (executionId: string) => h.runtime.keys.history(shortId(executionId));

async function storedEvent(executionId: string, index: number): Promise<Record<string, unknown>> {
  const raw = await redis.lindexBuffer(historyKey(executionId), index);
  return JSON.parse(unpack(raw!)) as Record<string, unknown>;
}

describe("the history hash chain on Redis", () => {
  it("exports a verifiable chain whose head is the record's, with the hashes out of the AWS-shaped history", async () => {
    const id = await run("plain");
    const record = await h.runtime.describeExecution(id);
    const history = await fullHistory(h.runtime, id);
    expect(history.some((e) => "hash" in e)).toBe(false);
    const verdict = await verified(id);
    // No STEPWISE_AUDIT_KEY here: the key is Redis's, and verify says what that proves.
    expect(verdict).toMatchObject({
      ok: true,
      head: record.historyHead,
      warnings: [KEPT_IN_REDIS_WARNING],
    });
    expect(record.historyHead?.eventId).toBe(history.length);
    // Each stored event carries the check of its hash (8 bytes, base64url) beside its fields.
    expect((await storedEvent(id, 0)).hash).toMatch(/^[A-Za-z0-9_-]{11}$/);
  });

  it("catches an event edited in Redis, and names it", async () => {
    const id = await run("edited");
    const event = await storedEvent(id, 4);
    event.timestamp = "2020-01-01T00:00:00.000Z";
    await redis.lset(historyKey(id), 4, pack(JSON.stringify(event)));
    expect(await verified(id)).toMatchObject({
      ok: false,
      problem: { kind: "changed", eventId: 5 },
    });
  });

  it("catches an event deleted in Redis", async () => {
    const id = await run("deleted");
    await redis.lset(historyKey(id), 3, "gone");
    await redis.lrem(historyKey(id), 1, "gone");
    expect(await verified(id)).toMatchObject({
      ok: false,
      problem: { kind: "removed", eventId: 4 },
    });
  });

  it("catches two events swapped in Redis", async () => {
    const id = await run("swapped");
    const [a, b] = await Promise.all([
      redis.lindexBuffer(historyKey(id), 2),
      redis.lindexBuffer(historyKey(id), 3),
    ]);
    await redis.lset(historyKey(id), 2, b!);
    await redis.lset(historyKey(id), 3, a!);
    expect(await verified(id)).toMatchObject({
      ok: false,
      problem: { kind: "reordered", eventId: 3 },
    });
  });

  it("catches the definition changed in Redis (with or without its recorded hash)", async () => {
    await createMachine(h.runtime, "redefined", definition);
    const { executionId: id } = await h.runtime.startExecution("redefined", {
      input: { items: [] },
    });
    await h.runtime.waitForExecution(id, 20_000);
    const versionKey = h.runtime.keys.machineVersion("redefined", 1);
    const changed = { ...definition, Comment: "edited" };
    await redis.hset(versionKey, "def", JSON.stringify(changed));
    expect(await verified(id)).toMatchObject({ ok: false, problem: { kind: "definition" } });
    const { sha256 } = await import("../../runtime/store/canonical.js");
    const { canonicalJson } = await import("../../engine/core/canonical.js");
    // Its recorded hash too: the version chain no longer holds...
    await redis.hset(versionKey, "hash", sha256(canonicalJson(changed)));
    expect(await verified(id)).toMatchObject({
      ok: false,
      problem: { kind: "definition", message: expect.stringContaining("version chain") },
    });
    // ...and its version link recomputed: the execution's chain did not start on it.
    const [createdAt, by, pvh] = await redis.hmget(versionKey, "createdAt", "by", "pvh");
    const link = {
      name: "redefined",
      version: 1,
      definitionHash: sha256(canonicalJson(changed)),
      createdAt: createdAt!,
      createdBy: by!,
      previous: pvh!,
    };
    await redis.hset(versionKey, "vh", versionHash(link));
    expect(await verified(id)).toMatchObject({
      ok: false,
      problem: { kind: "definition", message: expect.stringContaining("genesis") },
    });
  });

  it("catches the signature replaced in the file; the CLI says so and exits 1", async () => {
    const id = await run("resigned");
    const lines = await h.runtime.exportAudit(id);
    const file = join(dir, "resigned.jsonl");
    const keyFile = join(dir, "public.pem");
    writeFileSync(keyFile, publicKeyPem);
    writeFileSync(file, lines.join("\n"));
    const io = capture();
    expect(await main(["audit", "verify", file, "--public-key", keyFile], io)).toBe(0);
    expect(io.out()).toContain("OK");

    const trailer = JSON.parse(lines.at(-1)!) as AuditTrailer;
    const forger = generateKeyPairSync("ed25519");
    trailer.signature = sign(null, signedPayload(trailer), forger.privateKey).toString("base64");
    trailer.publicKey = forger.publicKey.export({ type: "spki", format: "pem" }) as string;
    writeFileSync(file, [...lines.slice(0, -1), JSON.stringify(trailer)].join("\n"));
    const forged = capture();
    expect(await main(["audit", "verify", file, "--public-key", keyFile], forged)).toBe(1);
    expect(forged.out()).toMatch(/FAILED \(signature\).*another key/);
  });

  it("records who created each version, chained on the version before it", async () => {
    const v1 = definition as StateMachineDefinition;
    await h.runtime.createStateMachine("provenance", v1, { caller: { name: "alice" } });
    const v2 = { ...v1, Comment: "v2" };
    await h.runtime.updateStateMachine("provenance", v2, { caller: { name: "bob" } });
    const { executionId: id } = await h.runtime.startExecution("provenance", {
      input: { items: [] },
    });
    await h.runtime.waitForExecution(id, 20_000);
    const header = JSON.parse((await h.runtime.exportAudit(id))[0]!) as {
      versions: { version: number; createdBy: string; previous: string; hash: string }[];
    };
    expect(header.versions.map((v) => [v.version, v.createdBy])).toEqual([
      [1, "alice"],
      [2, "bob"],
    ]);
    expect(header.versions[1]!.previous).toBe(header.versions[0]!.hash);
    expect((await verified(id)).ok).toBe(true);
    // A version's creator rewritten in Redis breaks the version chain.
    await redis.hset(h.runtime.keys.machineVersion("provenance", 1), "by", "mallory");
    expect(await verified(id)).toMatchObject({ ok: false, problem: { kind: "definition" } });
  });

  it("an execution started before the chain goes on (its chain unanchored), and verify says so", async () => {
    await createMachine(h.runtime, "legacy", {
      StartAt: "Hold",
      States: {
        Hold: { Type: "Wait", Seconds: 1, Next: "After" },
        After: { Type: "Pass", End: true },
      },
    });
    const { executionId: id } = await h.runtime.startExecution("legacy", { input: {} });
    // What a record written by the previous version looks like: no chain head or genesis.
    await redis.hdel(h.runtime.keys.execution(shortId(id)), "hh", "hg");
    expect((await h.runtime.waitForExecution(id, 20_000)).status).toBe("SUCCEEDED");
    expect(await verified(id)).toMatchObject({ ok: false, problem: { kind: "unchained" } });
  });

  it("signs with the key STEPWISE_AUDIT_KEY names, and refuses one that is not Ed25519", async () => {
    const client = new RedisClient(h.redisUrl, { name: "audit-test" });
    try {
      const file = join(dir, "signing.pem");
      const pair = generateKeyPairSync("ed25519");
      writeFileSync(file, pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string);
      const signer = await loadAuditSigner(client, h.runtime.keys, file);
      expect(signer.publicKeyPem).toBe(pair.publicKey.export({ type: "spki", format: "pem" }));
      const rsa = join(dir, "rsa.pem");
      const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 1024 });
      writeFileSync(rsa, privateKey.export({ type: "pkcs8", format: "pem" }) as string);
      await expect(loadAuditSigner(client, h.runtime.keys, rsa)).rejects.toThrow(/not Ed25519/);
      // Without a file: the one key kept in Redis, whoever asks first.
      const [a, b] = await Promise.all([
        loadAuditSigner(client, h.runtime.keys, ""),
        loadAuditSigner(client, h.runtime.keys, ""),
      ]);
      expect(a.publicKeyPem).toBe(publicKeyPem);
      expect(b.publicKeyPem).toBe(publicKeyPem);
    } finally {
      await client.close();
    }
  });

  it("chains pause and resume events with the transitions around them", async () => {
    await createMachine(h.runtime, "waits", {
      StartAt: "Hold",
      States: {
        Hold: { Type: "Wait", Seconds: 1, Next: "After" },
        After: { Type: "Pass", End: true },
      },
    });
    const { executionId: id } = await h.runtime.startExecution("waits", { input: {} });
    await h.runtime.pauseExecution(id);
    await h.runtime.resumeExecution(id);
    expect((await h.runtime.waitForExecution(id, 20_000)).status).toBe("SUCCEEDED");
    const types = (await fullHistory(h.runtime, id)).map((e: HistoryEvent) => e.type);
    expect(types).toEqual(expect.arrayContaining(["ExecutionPaused", "ExecutionResumed"]));
    expect((await verified(id)).ok).toBe(true);
  });

  it("serves the export (executions:read) and the public key (public) over HTTP", async () => {
    const id = await run("http");
    const app = await buildServer({
      runtime: h.runtime,
      apiKeys: parseApiKeys(
        "reader:run:reader-secret-0123456789ab,cb:callback:cb-secret-0123456789abcd",
      ),
    });
    try {
      const key = await app.inject({ url: "/v1/audit/public-key" });
      expect(key.statusCode).toBe(200);
      expect(key.body).toBe(publicKeyPem);
      const url = `/v1/executions/${encodeURIComponent(id)}/audit`;
      const denied = await app.inject({
        url,
        headers: { "x-api-key": "cb-secret-0123456789abcd" },
      });
      expect(denied.statusCode).toBe(403);
      const reply = await app.inject({
        url,
        headers: { "x-api-key": "reader-secret-0123456789ab" },
      });
      expect(reply.statusCode).toBe(200);
      expect(reply.headers["content-type"]).toContain("application/x-ndjson");
      expect(verifyAudit(reply.body, { publicKeyPem }).ok).toBe(true);
      const described = await app.inject({
        url: `/v1/executions/${encodeURIComponent(id)}`,
        headers: { "x-api-key": "reader-secret-0123456789ab" },
      });
      expect(described.json().historyHead).toEqual(
        (await h.runtime.describeExecution(id)).historyHead,
      );
    } finally {
      await app.close();
    }
  });

  it("a 2,000-item Map's chain (its iterations' events interleaved in one history) verifies", async () => {
    const id = await run("wide", 2000);
    const history = await fullHistory(h.runtime, id);
    expect(historyProblems(history)).toEqual([]);
    expect(history.filter((e) => e.type === "MapIterationSucceeded")).toHaveLength(2000);
    expect(await verified(id)).toMatchObject({ ok: true, head: { eventId: history.length } });
  }, 180_000);
});

function capture() {
  let out = "";
  let err = "";
  return {
    stdout: (t: string) => void (out += t),
    stderr: (t: string) => void (err += t),
    out: () => out + err,
  };
}
