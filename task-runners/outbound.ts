import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";
import { hostAllowed, refusal, type EgressPolicy, EGRESS_ENV } from "./egress.js";

/**
 * The one way a runner opens a connection (HTTP tasks, approval webhooks). Every
 * hop — the first request and each redirect, followed here by hand — passes the
 * egress policy twice: the URL's scheme and literal address before connecting,
 * and each address DNS gives for its host name inside the socket's `lookup`, so
 * the socket connects to the very address that was judged (a second resolution
 * cannot rebind it to 127.0.0.1). The response body is read up to a cap and no
 * further: the connection is destroyed as soon as it would be exceeded.
 */
export interface OutboundOptions {
  policy: EgressPolicy;
  /** Most bytes of (decoded) response body read before giving up. */
  maxResponseBytes: number;
}

export interface OutboundRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** Redirects followed (fetch's 20 by default); 0 hands a 3xx back as it is. */
  maxRedirects?: number;
}

export interface OutboundResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered (after redirects). */
  url: URL;
}

/** The policy refused a hop: never connected. */
export class EgressRefused extends Error {
  readonly code = "ERR_EGRESS_REFUSED";
  constructor(message: string) {
    super(`${message}; ${EGRESS_ENV} opens exceptions`);
    this.name = "EgressRefused";
  }
}

/** The response body is longer than `maxResponseBytes`; the connection was closed. */
export class ResponseTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the response body is over ${limit} bytes`);
    this.name = "ResponseTooLarge";
  }
}

export type Send = (request: OutboundRequest) => Promise<OutboundResponse>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function outbound(options: OutboundOptions): Send {
  const { policy } = options;
  const lookup = checkedLookup(policy);
  // Own agents: a pooled socket of the global agent may have been opened by code
  // that never asked the policy, and would be reused for the same host and port.
  const agents = {
    "http:": new http.Agent({ keepAlive: true, lookup }),
    "https:": new https.Agent({ keepAlive: true, lookup }),
  };

  return async (request) => {
    let url = request.url;
    let method = request.method.toUpperCase();
    let body = request.body;
    let headers = withDefaults(request.headers);
    const maxRedirects = request.maxRedirects ?? 20;
    for (let hop = 0; ; hop++) {
      admit(policy, url);
      const response = await open(agents, url, method, headers, body, request.signal);
      const location = response.headers.location;
      if (!REDIRECTS.has(response.statusCode ?? 0) || !location || maxRedirects === 0) {
        return {
          status: response.statusCode ?? 0,
          statusText: response.statusMessage ?? "",
          headers: flatHeaders(response),
          body: await readCapped(response, options.maxResponseBytes, request.signal),
          url,
        };
      }
      response.destroy();
      if (hop >= maxRedirects) throw new Error(`more than ${maxRedirects} redirects`);
      const next = new URL(location, url);
      // As fetch does (Fetch standard, "HTTP-redirect fetch"): 303, and 301/302 after
      // a POST, turn into a GET without a body; credentials stay with their origin.
      const status = response.statusCode!;
      if (
        status === 303 ? method !== "HEAD" : (status === 301 || status === 302) && method === "POST"
      ) {
        method = "GET";
        body = undefined;
        headers = without(headers, ["content-type", "content-length"]);
      }
      if (next.origin !== url.origin) {
        headers = without(headers, ["authorization", "cookie", "proxy-authorization"]);
      }
      url = next;
    }
  };
}

/** Scheme and literal address of one hop; names are judged in the socket's lookup. */
function admit(policy: EgressPolicy, url: URL): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new EgressRefused(
      `${url.protocol} URLs are refused by the egress policy (only http: and https:)`,
    );
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0 || hostAllowed(policy, url.hostname)) return;
  const reason = refusal(policy, host);
  if (reason)
    throw new EgressRefused(`${host} is ${article(reason)} address, refused by the egress policy`);
}

/**
 * A `lookup` for net.connect that resolves, keeps only the addresses the policy
 * allows and hands those to the socket. Node calls it with `all: true` when it
 * races address families (autoSelectFamily, on by default since Node 20). The AWS
 * clients' agents use it too (aws/transport.ts).
 */
export function checkedLookup(policy: EgressPolicy): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number }, callback: never) => {
    const done = callback as unknown as (
      err: Error | null,
      address?: string | LookupAddress[],
      family?: number,
    ) => void;
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) return done(err);
      const open = hostAllowed(policy, hostname);
      const allowed = addresses.filter((a) => open || refusal(policy, a.address) === undefined);
      if (allowed.length === 0) {
        const first = addresses[0];
        const reason = first ? refusal(policy, first.address) : "nothing";
        return done(
          new EgressRefused(
            `${hostname} resolves to ${first?.address ?? "no address"}, ${article(reason ?? "")} address, refused by the egress policy`,
          ),
        );
      }
      if (options.all) return done(null, allowed);
      done(null, allowed[0]!.address, allowed[0]!.family);
    });
  }) as LookupFunction;
}

function open(
  agents: Record<"http:" | "https:", http.Agent>,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const protocol = url.protocol as "http:" | "https:";
  const requestFn = protocol === "https:" ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = requestFn(
      url,
      {
        method,
        agent: agents[protocol],
        signal,
        headers:
          body === undefined
            ? headers
            : { ...headers, "content-length": String(Buffer.byteLength(body)) },
      },
      resolve,
    );
    req.on("error", (err) => reject(signal.aborted ? (signal.reason as Error) : err));
    req.end(body);
  });
}

/** Reads the (decoded) body, destroying the connection as soon as it passes `limit`. */
async function readCapped(
  response: IncomingMessage,
  limit: number,
  signal: AbortSignal,
): Promise<Buffer> {
  const encoding = (response.headers["content-encoding"] ?? "").trim().toLowerCase();
  const declared = Number(response.headers["content-length"]);
  if (encoding === "" || encoding === "identity") {
    if (Number.isFinite(declared) && declared > limit) {
      response.destroy();
      throw new ResponseTooLarge(limit);
    }
  }
  const decoded = decoder(encoding);
  const source: Readable = decoded ? pipeline(response, decoded, () => undefined) : response;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      size += (chunk as Buffer).length;
      if (size > limit) throw new ResponseTooLarge(limit);
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    throw signal.aborted ? (signal.reason as Error) : err;
  } finally {
    if (size > limit || signal.aborted) {
      response.destroy();
      source.destroy();
    }
  }
  return Buffer.concat(chunks);
}

function decoder(encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  switch (encoding) {
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip();
    case "deflate":
      return zlib.createInflate();
    case "br":
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

function withDefaults(headers: Record<string, string>): Record<string, string> {
  const lower: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) lower[k.toLowerCase()] = v;
  return {
    accept: "*/*",
    "accept-encoding": "gzip, deflate, br",
    "user-agent": "stepwise",
    ...lower,
  };
}

function without(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k)));
}

function flatHeaders(response: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(response.headers)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  }
  return out;
}

function article(kind: string): string {
  return /^[aeiou]/i.test(kind) ? `an ${kind}` : `a ${kind}`;
}
