import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { EGRESS_ENV, hostAllowed, refusal, type EgressPolicy } from "../egress.js";

/**
 * The sockets the AWS clients open, under the egress policy (DESIGN.md, "Side
 * effects") as HTTP tasks are (outbound.ts): AWS's own endpoints are public and
 * pass; an endpoint override aimed at loopback or a private network (LocalStack,
 * MinIO, dynalite on the operator's network) must be opened by STEPWISE_EGRESS_ALLOW.
 * Names are judged inside the socket's `lookup`, on every address DNS gives, so
 * the socket connects to an address that was judged; an IP literal never reaches
 * `lookup`, so `literalRefusal` judges it before the client is made.
 *
 * The credential chain's own requests (container and instance metadata) do not
 * use these agents: an instance role keeps working under a closed policy.
 */
export const EGRESS_REFUSED = "ERR_EGRESS_REFUSED";

export class AwsEgressRefused extends Error {
  readonly code = EGRESS_REFUSED;
  constructor(message: string) {
    super(`${message}; ${EGRESS_ENV} opens exceptions`);
    this.name = "EgressRefused";
  }
}

export interface Agents {
  httpAgent: http.Agent;
  httpsAgent: https.Agent;
}

export function egressAgents(policy: EgressPolicy): Agents {
  const lookup = checkedLookup(policy);
  return {
    httpAgent: new http.Agent({ keepAlive: true, lookup }),
    httpsAgent: new https.Agent({ keepAlive: true, lookup }),
  };
}

/** Why an endpoint whose host is an IP literal is refused, or undefined. */
export function literalRefusal(policy: EgressPolicy, endpoint: URL): string | undefined {
  const host = endpoint.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0 || hostAllowed(policy, endpoint.hostname)) return undefined;
  const reason = refusal(policy, host);
  return reason === undefined
    ? undefined
    : `${endpoint.origin}: ${host} is ${article(reason)} address, refused by the egress policy`;
}

function checkedLookup(policy: EgressPolicy): LookupFunction {
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
        const reason = first ? (refusal(policy, first.address) ?? "") : "";
        return done(
          new AwsEgressRefused(
            `${hostname} resolves to ${first?.address ?? "no address"}, ${article(reason)} address, refused by the egress policy`,
          ),
        );
      }
      if (options.all) return done(null, allowed);
      done(null, allowed[0]!.address, allowed[0]!.family);
    });
  }) as LookupFunction;
}

function article(kind: string): string {
  return /^[aeiou]/i.test(kind) ? `an ${kind}` : `a ${kind}`;
}
