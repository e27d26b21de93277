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
  type ChainIdentity,
} from "../../runtime/audit/chain.js";
import { pack, unpack } from "../../runtime/store/codec.js";
import { shortId } from "../../runtime/store/ids.js";
import { makeKeys, type Keys } from "../../runtime/store/keys.js";
import { ShardLayout } from "../../runtime/shards/shards.js";
import { spawnBin } from "./processes.js";
import { REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * Issue 44, findings 5 and 6, through the binary: `stepwise serve` with
 * STEPWISE_AUDIT_KEY (a key file Redis does not hold), an export fetched over
 * HTTP, and `stepwise audit verify FILE --public-key PEM` run as a user runs it.
 * An export whose header was edited, and a history rewritten in Redis as someone
 * with write access to Redis (but not the key) can rewrite it, exit 1 naming
 * what changed. Without the key, verify says how little its signature proves.
 */
const definition = {
  StartAt: "One",
  States: {
    One: { Type: "Pass", Result: { step: 1 }, Next: "Two" },
    Two: { Type: "Pass", Result: { step: 2 }, Next: "Three" },
    Three: { Type: "Pass", End: true },
  },
};

let dir: string;
let redis: Redis;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "stepwise-audit-forgery-"));
  redis = new Redis(REDIS_URL);
});
afterAll(() => {
  redis?.disconnect();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `definition` to its end on `stack`; the execution's ARN. */
async function run(stack: Stack, name: string): Promise<string> {
  const started = await stack.client.post(`/v1/state-machines/audited/executions`, {
    input: { amount: 100 },
    name,
  });
  expect(started.status).toBe(201);
  const id = started.body.executionId as string;
  await stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${encodeURIComponent(id)}`);
    return r.body.status === "SUCCEEDED" ? true : undefined;
  }, 30_000);
  return id;
}

/** GET /v1/executions/:id/audit (JSONL, application/x-ndjson), as lines. */
async function exported(stack: Stack, id: string): Promise<string[]> {
  const key = stack.client.defaultKey;
  const r = await fetch(`${stack.url}/v1/executions/${encodeURIComponent(id)}/audit`, {
    headers: key === null ? {} : { authorization: `Bearer ${key}` },
  });
  expect(r.status).toBe(200);
  return (await r.text()).split("\n").filter((l) => l !== "");
}

/** `stepwise audit verify FILE --public-key PEM`: its exit code and what it printed. */
async function verify(
  lines: string[],
  publicKey: string,
  name: string,
): Promise<{ code: number | null; output: string }> {
  const file = join(dir, `${name}.jsonl`);
  writeFileSync(file, lines.join("\n") + "\n");
  const spawned = spawnBin(["audit", "verify", file, "--public-key", publicKey]);
  const code = await new Promise<number | null>((resolve) => spawned.child.once("close", resolve));
  return { code, output: spawned.output() };
}

/** The keys of an execution's shard, in the layout the service stored (runtime/shards/shards.ts). */
async function keysOf(stack: Stack, id: string): Promise<Keys> {
  const count = Number(await redis.get(makeKeys(stack.prefix).shardCount));
  return new ShardLayout(stack.prefix, count).keysOf(shortId(id));
}

/** The stored history: each entry's event and its `hash` field (check, or check.signature). */
async function storedEntries(keys: Keys, id: string) {
  const raw = await redis.lrangeBuffer(keys.history(shortId(id)), 0, -1);
  return raw.map((r) => {
    const { event, hash } = splitHash(JSON.parse(unpack(r)) as HistoryEvent);
    return { event, hash: hash! };
  });
}

/** The chain's genesis: public (the export's identity), so an attacker computes it too. */
function genesisOf(lines: string[]): string {
  return genesisHash((JSON.parse(lines[0]!) as { identity: ChainIdentity }).identity);
}

async function publicKeyOf(stack: Stack, name: string): Promise<string> {
  const r = await stack.client.get("/v1/audit/public-key");
  expect(r.status).toBe(200);
  const file = join(dir, `${name}.pem`);
  writeFileSync(file, r.text);
  return file;
}

describe("with STEPWISE_AUDIT_KEY: forgeries are named", () => {
  let stack: Stack;
  let publicKey: string;

  beforeAll(async () => {
    const keyFile = join(dir, "audit-key.pem");
    const pair = generateKeyPairSync("ed25519");
    writeFileSync(keyFile, pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string);
    stack = await startStack({ env: { STEPWISE_AUDIT_KEY: keyFile } });
    const created = await stack.client.post("/v1/state-machines", { name: "audited", definition });
    expect(created.status).toBe(201);
    publicKey = await publicKeyOf(stack, "external");
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("verifies an untouched export with no warning", async () => {
    const id = await run(stack, "untouched");
    const { code, output } = await verify(await exported(stack, id), publicKey, "untouched");
    expect(output).toMatch(/OK: \d+ events of arn:aws:states:/);
    expect(output).not.toContain("warning");
    expect(code).toBe(0);
  });

  const headerEdits: [string, (header: Record<string, any>) => void][] = [
    ["execution.input", (h) => (h.execution.input = { amount: 1_000_000 })],
    ["execution.output", (h) => (h.execution.output = { step: 3 })],
    ["execution.status", (h) => (h.execution.status = "FAILED")],
    ["exportedAt", (h) => (h.exportedAt = "2020-01-01T00:00:00.000Z")],
    ["versions", (h) => delete h.versions],
  ];

  it("names each header field changed after export (finding 5) and exits 1", async () => {
    const id = await run(stack, "header");
    const lines = await exported(stack, id);
    const header = JSON.parse(lines[0]!) as Record<string, any>;
    expect(header.versions).toBeDefined();
    for (const [field, edit] of headerEdits) {
      const changed = structuredClone(header);
      edit(changed);
      const file = `header-${field}`;
      const { code, output } = await verify(
        [JSON.stringify(changed), ...lines.slice(1)],
        publicKey,
        file,
      );
      expect(output).toContain(`FAILED (header): header changed: ${field}`);
      expect(code).toBe(1);
    }
  }, 60_000);

  it("names event 3 edited in Redis with every later check and hh recomputed (finding 6) and exits 1", async () => {
    const id = await run(stack, "rewritten");
    const keys = await keysOf(stack, id);
    const entries = await storedEntries(keys, id);
    entries[2]!.event.timestamp = "2020-01-01T00:00:00.000Z";
    let hh = genesisOf(await exported(stack, id));
    for (const [i, { event, hash }] of entries.entries()) {
      hh = eventHash(hh, event);
      // The check is public arithmetic; the signature after it is not: kept as it was.
      const dot = hash.indexOf(".");
      const check = eventCheck(hh) + (dot < 0 ? "" : hash.slice(dot));
      await redis.lset(keys.history(shortId(id)), i, pack(withHash(JSON.stringify(event), check)));
    }
    await redis.hset(keys.execution(shortId(id)), "hh", hh);
    const { code, output } = await verify(await exported(stack, id), publicKey, "rewritten");
    expect(output).toContain(`FAILED (checkpoint at event ${entries.length})`);
    expect(output).toMatch(/an event among 2\.\.\d+ was changed in storage/);
    expect(code).toBe(1);
  });

  it("names the last event dropped in Redis with hc and hh reset (finding 6) and exits 1", async () => {
    const id = await run(stack, "truncated");
    const keys = await keysOf(stack, id);
    const entries = await storedEntries(keys, id);
    let hh = genesisOf(await exported(stack, id));
    for (const { event } of entries.slice(0, -1)) hh = eventHash(hh, event);
    await redis.rpop(keys.history(shortId(id)));
    await redis.hset(keys.execution(shortId(id)), "hc", entries.length - 1, "hh", hh);
    const { code, output } = await verify(await exported(stack, id), publicKey, "truncated");
    expect(output).toContain(`FAILED (removed at event ${entries.length})`);
    expect(output).toContain("without ExecutionSucceeded");
    expect(code).toBe(1);
  });
});

describe("without STEPWISE_AUDIT_KEY: verify says what the signature proves", () => {
  let stack: Stack;
  let publicKey: string;

  beforeAll(async () => {
    stack = await startStack({ env: { STEPWISE_AUDIT_KEY: undefined } });
    const created = await stack.client.post("/v1/state-machines", { name: "audited", definition });
    expect(created.status).toBe(201);
    publicKey = await publicKeyOf(stack, "in-redis");
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("warns that the key is kept in Redis, and still names a header edited after export", async () => {
    const id = await run(stack, "in-redis");
    const lines = await exported(stack, id);
    const ok = await verify(lines, publicKey, "in-redis");
    expect(ok.output).toContain(
      "warning: signed with a key kept in Redis: proves only that the file was not changed after export",
    );
    expect(ok.code).toBe(0);
    const header = JSON.parse(lines[0]!) as Record<string, any>;
    header.execution.input = { amount: 1 };
    const edited = await verify([JSON.stringify(header), ...lines.slice(1)], publicKey, "edited");
    expect(edited.output).toContain("FAILED (header): header changed: execution.input");
    expect(edited.code).toBe(1);
  });
});
