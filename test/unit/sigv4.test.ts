import { Hash } from "@smithy/hash-node";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import { describe, expect, it } from "vitest";
import { parseApiKeys } from "../../api/auth.js";
import { deriveSigningKey, SigningKeys } from "../../api/aws/signing-keys.js";
import { verifySignature, type SignedRequest } from "../../api/aws/sigv4.js";

/**
 * SigV4 verification (api/aws/sigv4.ts) against requests signed by smithy's
 * SignatureV4, as the AWS SDKs sign them, and its signing-key cache: a kept key
 * must never let through what a freshly derived one would refuse.
 */
const SECRET = "unit-secret-0123456789abcdef";
const KEYS = parseApiKeys(`ops:admin:${SECRET}`);
const NOW = Date.parse("2026-03-04T05:06:07Z");

async function sign(options: {
  secret?: string;
  region?: string;
  at?: number;
  body?: string;
  path?: string;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  /** Whether the client signs its payload hash (x-amz-content-sha256), as SDKs do. */
  applyChecksum?: boolean;
}): Promise<SignedRequest> {
  const signer = new SignatureV4({
    credentials: { accessKeyId: "ops", secretAccessKey: options.secret ?? SECRET },
    region: options.region ?? "us-east-1",
    service: "states",
    sha256: Hash.bind(null, "sha256"),
    applyChecksum: options.applyChecksum ?? true,
  });
  const body = options.body ?? '{"stateMachineArn":"arn"}';
  const path = options.path ?? "/";
  const query = options.query ?? {};
  const signed = await signer.sign(
    new HttpRequest({
      method: "POST",
      hostname: "localhost",
      path,
      query,
      headers: {
        host: "localhost:8080",
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": "AWSStepFunctions.StartSyncExecution",
        ...options.headers,
      },
      body,
    }),
    { signingDate: new Date(options.at ?? NOW) },
  );
  // As node:http hands them over: lower-case names.
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) headers[name.toLowerCase()] = value;
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const one of [v].flat()) search.append(k, one);
  const text = search.toString();
  // As sent on the wire: the path percent-encoded, the query form-encoded.
  const url = encodeURI(path) + (text ? `?${text}` : "");
  return { method: "POST", url, headers, body };
}

function verify(request: SignedRequest, cache = new SigningKeys(), now = NOW) {
  return verifySignature(KEYS, request, cache, now);
}

/** The exception type a verification threw. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    return (err as { type: string }).type;
  }
  throw new Error("the request verified");
}

/** The same request with one part of its Authorization header replaced. */
function withAuthorization(request: SignedRequest, from: RegExp, to: string): SignedRequest {
  const authorization = String(request.headers.authorization).replace(from, to);
  return { ...request, headers: { ...request.headers, authorization } };
}

describe("SigV4 verification", () => {
  it("accepts what smithy signs: queries, escaped paths, folded and unsignable headers", async () => {
    const requests = [
      await sign({}),
      await sign({ applyChecksum: false }),
      await sign({ body: "" }),
      await sign({ body: '{"input":"{\\"ü\\": \\"✓\\"}"}' }),
      await sign({ query: { b: "2", a: ["x y", "é"], "z*": "~" } }),
      await sign({ path: "/a b/./c/../é/" }),
      await sign({ headers: { "x-custom": "  a \t  b  ", "x-amz-user-agent": "aws-sdk-js/3" } }),
      await sign({ headers: { "user-agent": "curl/8", "x-amzn-trace-id": "Root=1" } }),
      await sign({ region: "eu-west-1" }),
    ];
    const cache = new SigningKeys();
    for (const request of requests) {
      expect(verify(request).name).toBe("ops");
      // Twice on one cache: the second finds the kept key.
      expect(verify(request, cache).name).toBe("ops");
      expect(verify(request, cache).name).toBe("ops");
    }
  });

  it("refuses a tampered body, header, target or payload hash", async () => {
    const request = await sign({});
    const cache = new SigningKeys();
    verify(request, cache);
    expect(refusal(() => verify({ ...request, body: '{"stateMachineArn":"other"}' }, cache))).toBe(
      "InvalidSignatureException",
    );
    const target = { ...request.headers, "x-amz-target": "AWSStepFunctions.DeleteStateMachine" };
    expect(refusal(() => verify({ ...request, headers: target }, cache))).toBe(
      "InvalidSignatureException",
    );
    // A hash that matches the tampered body does not help: the hash is signed.
    const unchecked = await sign({ applyChecksum: false });
    verify(unchecked, cache);
    expect(refusal(() => verify({ ...unchecked, body: "{}" }, cache))).toBe(
      "InvalidSignatureException",
    );
    expect(refusal(() => verify({ ...request, url: "/?a=1" }, cache))).toBe(
      "InvalidSignatureException",
    );
  });

  it("refuses a replay once the 15 minutes of skew have passed, and a request from the future", async () => {
    const request = await sign({});
    const cache = new SigningKeys();
    verify(request, cache);
    expect(refusal(() => verify(request, cache, NOW + 16 * 60_000))).toBe(
      "InvalidSignatureException",
    );
    expect(refusal(() => verify(request, cache, NOW - 16 * 60_000))).toBe(
      "InvalidSignatureException",
    );
  });

  describe("the signing-key cache", () => {
    it("derives AWS's documented signing key", () => {
      // AWS's SigV4 example: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, 20120215, us-east-1, iam.
      expect(
        deriveSigningKey(
          "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
          "20120215",
          "us-east-1",
          "iam",
        ).toString("hex"),
      ).toBe("f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
    });

    it("still refuses a wrong secret once the right one's key is kept", async () => {
      const cache = new SigningKeys();
      verify(await sign({}), cache);
      expect(cache.lookup(SECRET, "20260304/us-east-1/states/aws4_request")).toBeDefined();
      const wrong = await sign({ secret: "not-the-secret-0123456789" });
      expect(refusal(() => verify(wrong, cache))).toBe("InvalidSignatureException");
    });

    it("still refuses a changed date, and derives the other date's key for a request signed then", async () => {
      // Five minutes past midnight: a request signed ten minutes earlier is of another day.
      const now = Date.parse("2026-03-05T00:05:00Z");
      const today = await sign({ at: now });
      const yesterday = await sign({ at: now - 10 * 60_000 });
      const cache = new SigningKeys();
      expect(verify(today, cache, now).name).toBe("ops");
      // Yesterday's signature presented with today's date (credential scope and header).
      const moved = withAuthorization(yesterday, /\/20260304\//, "/20260305/");
      moved.headers["x-amz-date"] = String(today.headers["x-amz-date"]);
      expect(refusal(() => verify(moved, cache, now))).toBe("InvalidSignatureException");
      // Today's signature presented with yesterday's date.
      const back = withAuthorization(today, /\/20260305\//, "/20260304/");
      back.headers["x-amz-date"] = String(yesterday.headers["x-amz-date"]);
      expect(refusal(() => verify(back, cache, now))).toBe("InvalidSignatureException");
      expect(verify(yesterday, cache, now).name).toBe("ops");
      expect(verify(today, cache, now).name).toBe("ops");
    });

    it("still refuses another region's signature, and keeps each region's key apart", async () => {
      const cache = new SigningKeys();
      const east = await sign({ region: "us-east-1" });
      const west = await sign({ region: "eu-west-1" });
      verify(east, cache);
      const moved = withAuthorization(east, /\/us-east-1\//, "/eu-west-1/");
      expect(refusal(() => verify(moved, cache))).toBe("InvalidSignatureException");
      expect(verify(west, cache).name).toBe("ops");
      expect(
        refusal(() => verify(withAuthorization(west, /\/eu-west-1\//, "/us-east-1/"), cache)),
      ).toBe("InvalidSignatureException");
    });

    it("keeps a key only once a request signed with it has verified", async () => {
      const cache = new SigningKeys();
      const forged = withAuthorization(
        await sign({ region: "xx-fake-1" }),
        /Signature=\w+/,
        `Signature=${"0".repeat(64)}`,
      );
      expect(refusal(() => verify(forged, cache))).toBe("InvalidSignatureException");
      expect(cache.lookup(SECRET, "20260304/xx-fake-1/states/aws4_request")).toBeUndefined();
    });
  });
});
