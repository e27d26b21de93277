import { createHmac } from "node:crypto";

/**
 * SigV4's derived signing keys, kept per secret and credential scope
 * (`<date>/<region>/<service>/aws4_request`). Deriving one takes four chained
 * HMACs, more than the rest of a request's verification; the key changes only with
 * the date, so one derivation a day serves every request a client signs.
 *
 * Only the key is kept, never a verdict: every request is still verified with it
 * (its own canonical request hashed, its own signature computed and compared). A
 * key is kept once a request signed with it has verified (`remember`), so requests
 * with made-up regions or dates can neither fill the cache nor push keys out of it.
 */

/** Scopes kept per secret: one or two dates (the 15-minute skew spans midnight) times a few regions. */
const MAX_SCOPES_PER_SECRET = 32;

/** `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`. */
export function deriveSigningKey(
  secret: string,
  date: string,
  region: string,
  service: string,
): Buffer {
  let key: Buffer = createHmac("sha256", `AWS4${secret}`).update(date, "utf8").digest();
  for (const part of [region, service, "aws4_request"]) {
    key = createHmac("sha256", key).update(part, "utf8").digest();
  }
  return key;
}

export class SigningKeys {
  private readonly bySecret = new Map<string, Map<string, Buffer>>();

  /** The key kept for this secret and scope, if a request verified with it. */
  lookup(secret: string, scope: string): Buffer | undefined {
    return this.bySecret.get(secret)?.get(scope);
  }

  /** Keeps a key that has just verified a request. */
  remember(secret: string, scope: string, key: Buffer): void {
    let scopes = this.bySecret.get(secret);
    if (!scopes) {
      scopes = new Map();
      this.bySecret.set(secret, scopes);
    }
    // A cheap bound (no LRU): past it, yesterday's and stray scopes go together.
    if (scopes.size >= MAX_SCOPES_PER_SECRET) scopes.clear();
    scopes.set(scope, key);
  }
}
