import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from "node:crypto";
import { readFileSync } from "node:fs";
import type { Keys } from "../keys.js";
import type { RedisClient } from "../redis.js";

export interface AuditSigner {
  privateKey: KeyObject;
  /** SPKI PEM: what `GET /v1/audit/public-key` serves and exports carry. */
  publicKeyPem: string;
}

/**
 * The Ed25519 key that signs audit exports. `STEPWISE_AUDIT_KEY` names a PEM
 * file (PKCS#8 private key), which is what a deployment that wants its exports
 * to prove anything should use: a key kept in Redis beside the history proves
 * only that the file was not changed after export. Without it, one key is
 * generated on first use and kept in Redis (`keys.auditKey`, SET NX so that
 * processes racing on first use all end up with the same key).
 */
export async function loadAuditSigner(
  client: RedisClient,
  keys: Keys,
  keyFile?: string,
): Promise<AuditSigner> {
  let pem: string;
  if (keyFile) {
    pem = readFileSync(keyFile, "utf8");
  } else {
    const fresh = generateKeyPairSync("ed25519").privateKey.export({
      type: "pkcs8",
      format: "pem",
    }) as string;
    await client.redis.set(keys.auditKey, fresh, "NX");
    pem = (await client.redis.get(keys.auditKey)) ?? fresh;
  }
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== "ed25519") {
    throw new Error(
      `the audit signing key${keyFile ? ` (${keyFile})` : ""} is ${privateKey.asymmetricKeyType}, not Ed25519`,
    );
  }
  const publicKeyPem = createPublicKey(privateKey).export({
    type: "spki",
    format: "pem",
  }) as string;
  return { privateKey, publicKeyPem };
}
