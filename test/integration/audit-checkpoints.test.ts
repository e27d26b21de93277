import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HistoryEvent } from "../../engine/core/history.js";
import {
  eventCheck,
  eventHash,
  genesisHash,
  splitHash,
  withHash,
} from "../../runtime/audit/chain.js";
import { verifyAudit, type Verdict } from "../../runtime/audit/verify.js";
import { pack, unpack } from "../../runtime/store/codec.js";
import { shortId } from "../../runtime/store/ids.js";
import { createRedisRuntime, type RedisRuntime } from "../../runtime/runtime.js";
import { startWorker, type StepwiseWorker } from "../../runtime/worker/worker.js";
import {
  createMachine,
  deleteKeys,
  FAST,
  fullHistory,
  randomPrefix,
  REDIS_URL,
} from "./helpers.js";
import { MAP_OF_PASSES } from "../audit/fixture.js";

// Issue 44, finding 6, on the Redis runtime: with STEPWISE_AUDIT_KEY (a key file
// Redis does not hold), every writer of history signs checkpoints in the commit
// that appends the event, and a history rewritten in Redis (checks and head
// recomputed, or its last event dropped) no longer verifies.
const definition = MAP_OF_PASSES;

const prefix = randomPrefix();
let dir: string;
let runtime: RedisRuntime;
let worker: StepwiseWorker;
let redis: Redis;
let publicKeyPem: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "stepwise-audit-key-"));
  const keyFile = join(dir, "audit.pem");
  const pair = generateKeyPairSync("ed25519");
  writeFileSync(keyFile, pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string);
  const settings = { redisUrl: REDIS_URL, prefix, shards: 1, ...FAST, auditKeyFile: keyFile };
  runtime = createRedisRuntime(settings);
  worker = await startWorker({ ...settings, onError: () => {} });
  redis = new Redis(REDIS_URL);
  await createMachine(runtime, "audited", definition);
  publicKeyPem = await runtime.auditPublicKey();
  expect(publicKeyPem).toBe(pair.publicKey.export({ type: "spki", format: "pem" }));
});
afterAll(async () => {
  redis.disconnect();
  await worker.close(2_000);
  await runtime.close();
  await deleteKeys(REDIS_URL, prefix);
  rmSync(dir, { recursive: true, force: true });
});

async function run(name: string, items = 3): Promise<string> {
  const input = { items: Array.from({ length: items }, (_, n) => ({ n })) };
  const { executionId } = await runtime.startExecution("audited", { input, name });
  expect((await runtime.waitForExecution(executionId, 60_000)).status).toBe("SUCCEEDED");
  return executionId;
}

async function verified(executionId: string): Promise<Verdict> {
  return verifyAudit((await runtime.exportAudit(executionId)).join("\n"), { publicKeyPem });
}

const historyKey = (id: string) => runtime.keys.history(shortId(id));
const recordKey = (id: string) => runtime.keys.execution(shortId(id));

async function storedEntries(id: string): Promise<{ event: HistoryEvent; hash: string }[]> {
  const raw = await redis.lrangeBuffer(historyKey(id), 0, -1);
  return raw.map((r) => {
    const { event, hash } = splitHash(JSON.parse(unpack(r)) as HistoryEvent);
    return { event, hash: hash! };
  });
}

/** The chain's genesis, from the export's identity (what the attacker reads too). */
async function genesisOf(id: string): Promise<string> {
  const header = JSON.parse((await runtime.exportAudit(id))[0]!) as {
    identity: Parameters<typeof genesisHash>[0];
  };
  return genesisHash(header.identity);
}

describe("signed checkpoints on Redis (STEPWISE_AUDIT_KEY set)", () => {
  it("signs event 1, every 32nd event and the terminal event in the commits that append them", async () => {
    const id = await run("plain", 20);
    const entries = await storedEntries(id);
    const signed = entries.filter((e) => e.hash.includes(".")).map((e) => e.event.id);
    expect(entries.length).toBeGreaterThan(64);
    expect(signed).toEqual([1, 32, 64, entries.length]);
    expect(entries.at(-1)!.event.type).toBe("ExecutionSucceeded");
    // The AWS-shaped history shows none of it.
    expect((await fullHistory(runtime, id)).some((e) => "hash" in e)).toBe(false);
    expect(await verified(id)).toMatchObject({ ok: true, warnings: [] });
  });

  it("catches event 3 edited in Redis with every later check and hh recomputed (finding 6)", async () => {
    const id = await run("rewritten");
    const entries = await storedEntries(id);
    entries[2]!.event.timestamp = "2020-01-01T00:00:00.000Z";
    let hh = await genesisOf(id);
    for (const [i, { event, hash }] of entries.entries()) {
      hh = eventHash(hh, event);
      const dot = hash.indexOf(".");
      const check = eventCheck(hh) + (dot < 0 ? "" : hash.slice(dot));
      await redis.lset(historyKey(id), i, pack(withHash(JSON.stringify(event), check)));
    }
    await redis.hset(recordKey(id), "hh", hh);
    expect(await verified(id)).toMatchObject({
      ok: false,
      problem: { kind: "checkpoint", eventId: entries.length },
    });
  });

  it("catches the last event dropped with hc and hh reset (finding 6)", async () => {
    const id = await run("truncated");
    const entries = await storedEntries(id);
    let hh = await genesisOf(id);
    for (const { event } of entries.slice(0, -1)) hh = eventHash(hh, event);
    await redis.rpop(historyKey(id));
    await redis.hset(recordKey(id), "hc", entries.length - 1, "hh", hh);
    expect(await verified(id)).toMatchObject({
      ok: false,
      problem: { kind: "removed", eventId: entries.length },
    });
  });

  it("signs the pause and resume events' checkpoints too", async () => {
    await createMachine(runtime, "waits", {
      StartAt: "Hold",
      States: {
        Hold: { Type: "Wait", Seconds: 1, Next: "After" },
        After: { Type: "Pass", End: true },
      },
    });
    const { executionId: id } = await runtime.startExecution("waits", { input: {} });
    await runtime.pauseExecution(id);
    await runtime.resumeExecution(id);
    expect((await runtime.waitForExecution(id, 20_000)).status).toBe("SUCCEEDED");
    const types = (await storedEntries(id)).map((e) => e.event.type);
    expect(types).toEqual(expect.arrayContaining(["ExecutionPaused", "ExecutionResumed"]));
    expect(await verified(id)).toMatchObject({ ok: true, warnings: [] });
  });
});
