import ipaddr from "ipaddr.js";

/**
 * The egress policy (DESIGN.md, "Side effects"): which addresses a runner that
 * opens connections may reach. A definition is code a client sends us, so an
 * `http:invoke` to `http://169.254.169.254/` or to the Redis next door would be a
 * server-side request forgery. Default deny for everything that is not public
 * unicast: loopback, RFC 1918 and fc00::/7, link-local (cloud metadata lives
 * there), unspecified, multicast, broadcast, CGNAT and every other range ipaddr.js
 * classifies as special. IPv4-mapped and IPv4-compatible IPv6 forms are judged by
 * the IPv4 address they carry. `STEPWISE_EGRESS_ALLOW` opens exceptions.
 *
 * Pure: it judges addresses and host names; outbound.ts applies it after DNS
 * resolution, on every redirect hop, and connects to the address it judged.
 */
export interface EgressPolicy {
  /** CIDR ranges whose addresses may be reached whatever their kind. */
  readonly ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
  /** Host names (lower case) that may be reached whatever they resolve to. */
  readonly hosts: ReadonlySet<string>;
}

export const EGRESS_ENV = "STEPWISE_EGRESS_ALLOW";

export const DENY_ALL_PRIVATE: EgressPolicy = { ranges: [], hosts: new Set() };

/**
 * `cidr|ip|host,…` (commas, and white space around entries, separate them):
 * `10.0.0.0/8`, `127.0.0.1`, `::1`, `localhost`, `metrics.internal`. A bare address
 * is its own /32 or /128. Throws on an entry that is none of these, so a typo stops
 * the service instead of silently allowing nothing.
 */
export function parseEgressAllow(text: string | undefined): EgressPolicy {
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  const hosts = new Set<string>();
  for (const raw of (text ?? "").split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    if (entry.includes("/")) {
      if (!ipaddr.isValidCIDR(entry)) throw new Error(`${EGRESS_ENV}: '${entry}' is not a CIDR`);
      const [address, bits] = ipaddr.parseCIDR(entry);
      const mapped = address.kind() === "ipv6" && isMapped(address as ipaddr.IPv6);
      ranges.push([unmap(address), mapped ? Math.max(0, bits - 96) : bits]);
    } else if (ipaddr.isValid(unbracket(entry))) {
      const address = unmap(ipaddr.parse(unbracket(entry)));
      ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
    } else if (
      /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(entry)
    ) {
      hosts.add(entry.toLowerCase().replace(/\.$/, ""));
    } else {
      throw new Error(`${EGRESS_ENV}: '${entry}' is neither a CIDR, an IP address nor a host name`);
    }
  }
  return { ranges, hosts };
}

/** The policy with nothing opened: what a runner built without one uses. */
export const DEFAULT_EGRESS: EgressPolicy = parseEgressAllow(undefined);

/** Whether a URL's host name (as `URL.hostname` spells it) is opened by name. */
export function hostAllowed(policy: EgressPolicy, hostname: string): boolean {
  return policy.hosts.has(unbracket(hostname).toLowerCase().replace(/\.$/, ""));
}

/**
 * Why connecting to `address` (an IP literal) is refused, or undefined when it is
 * allowed. The reason names the range ("loopback", "private", "linkLocal", …).
 */
export function refusal(policy: EgressPolicy, address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `'${address}' is not an IP address`;
  const ip = unmap(ipaddr.parse(address));
  for (const [range, bits] of policy.ranges) {
    if (range.kind() === ip.kind() && ip.match(range, bits)) return undefined;
  }
  const kind = ip.range();
  return kind === "unicast" ? undefined : kind;
}

function isMapped(ip: ipaddr.IPv6): boolean {
  const p = ip.parts;
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (RFC 6145) and ::a.b.c.d (the
  // deprecated IPv4-compatible form, which ipaddr.js calls unicast) all reach the
  // IPv4 address on some stacks, so each is judged as that address.
  const head = p.slice(0, 4).every((x) => x === 0);
  if (!head) return false;
  if (p[4] === 0 && p[5] === 0xffff) return true;
  if (p[4] === 0xffff && p[5] === 0) return true;
  // ::/96 except :: and ::1 (unspecified and loopback keep their own names).
  return p[4] === 0 && p[5] === 0 && (p[6] !== 0 || (p[7] ?? 0) > 1);
}

function unmap(ip: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (ip.kind() === "ipv4") return ip;
  const v6 = ip as ipaddr.IPv6;
  if (!isMapped(v6)) return v6;
  const p = v6.parts;
  return new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
}

function unbracket(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}
