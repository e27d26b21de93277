import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { hostAllowed, refusal, type EgressPolicy } from "../egress.js";
import { checkedLookup } from "../outbound.js";

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

function article(kind: string): string {
  return /^[aeiou]/i.test(kind) ? `an ${kind}` : `a ${kind}`;
}
