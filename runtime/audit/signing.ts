import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from "node:crypto";
import { readFileSync } from "node:fs";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";

export interface AuditSigner {
  privateKey: KeyObject;
  /** SPKI PEM: what `GET /v1/audit/public-key` serves and exports carry. */
  publicKeyPem: string;
  /**
   * The key was generated and is kept in Redis (no `STEPWISE_AUDIT_KEY`): whoever
   * can write the history can read it, so an export signed with it proves only
   * that the file was not changed after export, and no checkpoints are signed.
   */
  keptInRedis: boolean;
}

/**
 * The Ed25519 key that signs audit exports and checkpoints (checkpoints.ts).
 * `STEPWISE_AUDIT_KEY` names a PEM file (PKCS#8 private key), which is what a
 * deployment that wants its exports to prove anything should use: a key kept in
 * Redis beside the history proves only that the file was not changed after
 * export. Without it, one key is generated on first use and kept in Redis
 * (`keys.auditKey`, SET NX so that processes racing on first use all end up
 * with the same key).
 */
export async function loadAuditSigner(
  client: RedisClient,
  keys: Keys,
  keyFile?: string,
): Promise<AuditSigner> {
  let privateKey: KeyObject;
  if (keyFile) {
    privateKey = readSigningKey(keyFile);
  } else {
    const fresh = generateKeyPairSync("ed25519").privateKey.export({
      type: "pkcs8",
      format: "pem",
    }) as string;
    await client.redis.set(keys.auditKey, fresh, "NX");
    privateKey = ed25519Key(createPrivateKey((await client.redis.get(keys.auditKey)) ?? fresh));
  }
  const publicKeyPem = createPublicKey(privateKey).export({
    type: "spki",
    format: "pem",
  }) as string;
  return { privateKey, publicKeyPem, keptInRedis: !keyFile };
}

/** The private key in the PEM file `STEPWISE_AUDIT_KEY` names; throws naming the file when it is not an Ed25519 key. */
export function readSigningKey(keyFile: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(keyFile, "utf8"));
  } catch (error) {
    throw new Error(
      `the audit signing key (STEPWISE_AUDIT_KEY=${keyFile}) cannot be read: ${(error as Error).message}`,
    );
  }
  return ed25519Key(key, keyFile);
}

function ed25519Key(key: KeyObject, keyFile?: string): KeyObject {
  if (key.asymmetricKeyType !== "ed25519") {
    throw new Error(
      `the audit signing key${keyFile ? ` (${keyFile})` : ""} is ${key.asymmetricKeyType}, not Ed25519`,
    );
  }
  return key;
}

/** `load`, called once and its promise kept; a failure is forgotten, so the next call tries again. */
export function onceUntilFailed<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () =>
    (loaded ??= load().catch((err: unknown) => {
      loaded = undefined;
      throw err;
    }));
}
