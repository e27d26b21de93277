import { createHmac, hash, timingSafeEqual } from "node:crypto";
import { Hash } from "@smithy/hash-node";
import { HttpRequest } from "@smithy/protocol-http";
import { getCanonicalHeaders, SignatureV4Base } from "@smithy/signature-v4";
import { secretOf, type ApiKey } from "../auth.js";
import { awsError } from "./errors.js";
import { deriveSigningKey, type SigningKeys } from "./signing-keys.js";

/**
 * AWS Signature Version 4, verified by signing the received request again with the
 * key's secret (the access key id is the API key's name) and comparing signatures,
 * on every request. The canonical request is built by @smithy/signature-v4, the AWS
 * SDKs' own signer, exactly as the client built it; the hashing is done here, with
 * the derived signing key kept per secret and scope (signing-keys.ts). Any region
 * is accepted (ARNs carry the deployment's own); the service must be `states`.
 */

/** AWS refuses requests signed more than 15 minutes before or after its clock. */
export const MAX_SKEW_MS = 15 * 60_000;

export interface SignedRequest {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256\s+Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;_.-]+),\s*Signature=([0-9a-f]{64})\s*$/i;

function header(headers: SignedRequest["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** An instant as X-Amz-Date writes it (`20240102T030405Z`), as smithy formats a signing date. */
function fmt(t: number): string {
  const iso = new Date(t).toISOString(); // 2024-01-02T03:04:05.000Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

/** `20240102T030405Z` → Date, or undefined. */
function parseAmzDate(text: string | undefined): Date | undefined {
  const m = text ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text) : null;
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  const date = new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, s!));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * The key that signed the request. Throws the exception AWS answers with:
 * MissingAuthenticationTokenException (no signature), IncompleteSignature (a
 * malformed one), UnrecognizedClientException (unknown access key id),
 * InvalidSignatureException (wrong signature, or a clock skew over 15 minutes).
 */
export function verifySignature(
  keys: readonly ApiKey[],
  request: SignedRequest,
  signingKeys: SigningKeys,
  now: number = Date.now(),
): ApiKey {
  const authorization = header(request.headers, "authorization");
  if (authorization === undefined) {
    throw awsError(
      "MissingAuthenticationTokenException",
      "Missing Authentication Token: sign the request with AWS Signature Version 4",
    );
  }
  const m = AUTHORIZATION.exec(authorization);
  if (!m) {
    throw awsError(
      "IncompleteSignature",
      "The Authorization header is not 'AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…'",
    );
  }
  const [, accessKeyId, scopeDate, region, service, signedList, signature] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  // Every key is looked at, so the time taken does not tell which names exist.
  let key: ApiKey | undefined;
  for (const k of keys) if (k.name === accessKeyId && key === undefined) key = k;
  const secret = key ? secretOf(key) : undefined;
  if (!key || secret === undefined) {
    throw awsError(
      "UnrecognizedClientException",
      "The security token included in the request is invalid.",
    );
  }
  const amzDate = header(request.headers, "x-amz-date");
  const signingDate = parseAmzDate(amzDate);
  if (!signingDate) {
    throw awsError("IncompleteSignature", "The request must carry an X-Amz-Date header");
  }
  if (now - signingDate.getTime() > MAX_SKEW_MS) {
    throw awsError(
      "InvalidSignatureException",
      `Signature expired: ${amzDate} is now earlier than ${fmt(now - MAX_SKEW_MS)} (${fmt(now)} - 15 min.)`,
    );
  }
  if (signingDate.getTime() - now > MAX_SKEW_MS) {
    // A clock ahead of ours: AWS's words for a request signed in the future.
    throw awsError(
      "InvalidSignatureException",
      `Signature not yet current: ${amzDate} is still later than ${fmt(now + MAX_SKEW_MS)} (${fmt(now)} + 15 min.)`,
    );
  }
  if (service !== "states" || scopeDate !== amzDate!.slice(0, 8)) {
    throw awsError(
      "InvalidSignatureException",
      `Credential should be scoped to a valid date and the service 'states', not '${scopeDate}/${service}'`,
    );
  }
  const signed = signedList.toLowerCase().split(";");
  if (!signed.includes("host")) {
    throw awsError("InvalidSignatureException", "The signed headers must include 'host'");
  }
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = header(request.headers, name);
    if (value === undefined) {
      throw awsError("InvalidSignatureException", `The signed header '${name}' is missing`);
    }
    headers[name] = value;
  }
  // smithy takes a present x-amz-content-sha256 on trust: check it against the body.
  const declared = headers["x-amz-content-sha256"];
  if (declared !== undefined && declared !== sha256Hex(request.body)) {
    throw awsError(
      "InvalidSignatureException",
      "The x-amz-content-sha256 header does not match the request body",
    );
  }
  const q = request.url.indexOf("?");
  const path = q < 0 ? request.url : request.url.slice(0, q);
  const query: Record<string, string | string[]> = {};
  if (q >= 0) {
    for (const [k, v] of new URLSearchParams(request.url.slice(q + 1))) {
      const prior = query[k];
      query[k] = prior === undefined ? v : Array.isArray(prior) ? [...prior, v] : [prior, v];
    }
  }
  // What smithy's signRequest signs: the signed headers less those it generates
  // itself, then its own X-Amz-Date (this one, as it formats it).
  delete headers.authorization;
  delete headers.date;
  const longDate = fmt(signingDate.getTime());
  headers["x-amz-date"] = longDate;
  const canonicalRequest = CANONICAL.request(
    new HttpRequest({
      method: request.method,
      path: path === "/" ? path : decodeURIComponent(path),
      query,
      headers,
    }),
    new Set(signed),
    // A declared payload hash was checked against the body above: not hashed twice.
    declared ?? sha256Hex(request.body),
  );
  const shortDate = longDate.slice(0, 8);
  const scope = `${shortDate}/${region}/states/aws4_request`;
  const stringToSign = `AWS4-HMAC-SHA256\n${longDate}\n${scope}\n${sha256Hex(canonicalRequest)}`;
  const kept = signingKeys.lookup(secret, scope);
  const signingKey = kept ?? deriveSigningKey(secret, shortDate, region, "states");
  const expected = createHmac("sha256", signingKey).update(stringToSign, "utf8").digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, "hex"))) {
    throw awsError(
      "InvalidSignatureException",
      "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.",
    );
  }
  if (!kept) signingKeys.remember(secret, scope, signingKey);
  return key;
}

/**
 * The canonical request as @smithy/signature-v4 builds it, the AWS SDKs' own
 * signer: its header canonicalisation (which headers, trimmed and folded how),
 * path normalisation and escaping, and query order, so a request verifies exactly
 * when an SDK would have signed it so. Only the hashing is done here, synchronously
 * and without smithy's per-request copies of the request.
 */
class CanonicalRequests extends SignatureV4Base {
  constructor() {
    super({
      // Unused: this signs nothing; the base class only wants them.
      credentials: { accessKeyId: "", secretAccessKey: "" },
      region: "",
      service: "states",
      sha256: Hash.bind(null, "sha256"),
      applyChecksum: false,
    });
  }

  request(request: HttpRequest, signed: Set<string>, payloadHash: string): string {
    return this.createCanonicalRequest(
      request,
      getCanonicalHeaders(request, undefined, signed),
      payloadHash,
    );
  }
}

const CANONICAL = new CanonicalRequests();

function sha256Hex(text: string): string {
  // One-shot: a third of createHash().update().digest()'s cost on short texts.
  return hash("sha256", text, "hex");
}
