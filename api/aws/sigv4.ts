import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from "node:crypto";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import { secretOf, type ApiKey } from "../auth.js";
import { awsError } from "./errors.js";

/**
 * AWS Signature Version 4, verified by signing the received request again with the
 * key's secret (the access key id is the API key's name) and comparing signatures.
 * The signing is @smithy/signature-v4's, the AWS SDKs' own: the canonical request
 * is built exactly as the client built it. Any region is accepted (ARNs carry the
 * deployment's own); the service must be `states`.
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
export async function verifySignature(
  keys: readonly ApiKey[],
  request: SignedRequest,
  now: number = Date.now(),
): Promise<ApiKey> {
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
  const fmt = (t: number) => new Date(t).toISOString().replace(/[-:]|\.\d{3}/g, "");
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
  const resigned = await signerOf(key, secret).sign(
    new HttpRequest({
      method: request.method,
      protocol: "http:",
      hostname: headers.host ?? "",
      path: path === "/" ? path : decodeURIComponent(path),
      query,
      headers,
      body: request.body,
    }),
    {
      signingDate,
      signingRegion: region,
      signingService: "states",
      signableHeaders: new Set(signed),
    },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(resigned.headers.authorization))?.[1];
  if (
    !expected ||
    !timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(signature.toLowerCase(), "hex"))
  ) {
    throw awsError(
      "InvalidSignatureException",
      "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.",
    );
  }
  return key;
}

/**
 * One signer per key: its credentials never change, and smithy caches the signing
 * key it derives for a day and region (one HMAC per request finds it again).
 */
const signers = new WeakMap<ApiKey, SignatureV4>();

function signerOf(key: ApiKey, secret: string): SignatureV4 {
  let signer = signers.get(key);
  if (!signer) {
    signer = new SignatureV4({
      credentials: { accessKeyId: key.name, secretAccessKey: secret },
      region: "us-east-1", // each request's own region is passed to sign()
      service: "states",
      sha256: Sha256,
      applyChecksum: false,
    });
    signers.set(key, signer);
  }
  return signer;
}

/**
 * SHA-256 and HMAC-SHA256 from node:crypto in smithy's Checksum shape. Unlike
 * @smithy/hash-node's, it hands strings and views to node:crypto as they are,
 * without copying each into a new Buffer first: a request verifies with five of these.
 */
type SourceData = string | ArrayBuffer | ArrayBufferView;

class Sha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }
  update(data: Uint8Array): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined
      ? createHash("sha256")
      : createHmac("sha256", bytes(this.secret));
  }
}

function bytes(data: SourceData): string | Uint8Array {
  if (typeof data === "string" || data instanceof Uint8Array) return data;
  return ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : new Uint8Array(data);
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
