import { describe, expect, it } from "vitest";
import {
  DENY_ALL_PRIVATE,
  hostAllowed,
  parseEgressAllow,
  refusal,
} from "../../task-runners/egress.js";

/** The policy alone: which addresses are refused, and what the allow-list opens. */
describe("egress policy", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["192.0.2.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "linkLocal"],
    ["fe80::1%eth0", "linkLocal"],
    ["fc00::1", "uniqueLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "linkLocal"],
    ["::ffff:0:10.0.0.1", "private"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::7f00:1", "rfc6052"],
    ["2002:7f00:1::", "6to4"],
  ])("refuses %s (%s)", (address, kind) => {
    expect(refusal(DENY_ALL_PRIVATE, address)).toBe(kind);
  });

  it.each(["93.184.215.14", "8.8.8.8", "2606:4700::6810:84e5", "::ffff:8.8.8.8"])(
    "allows the public unicast address %s",
    (address) => {
      expect(refusal(DENY_ALL_PRIVATE, address)).toBeUndefined();
    },
  );

  it("opens CIDRs, single addresses (IPv4-mapped forms too) and host names", () => {
    const policy = parseEgressAllow(" 10.0.0.0/8, 127.0.0.1 ,::1, Metrics.Internal., fd00::/8");
    expect(refusal(policy, "10.200.0.1")).toBeUndefined();
    expect(refusal(policy, "127.0.0.1")).toBeUndefined();
    expect(refusal(policy, "::ffff:127.0.0.1")).toBeUndefined();
    expect(refusal(policy, "127.0.0.2")).toBe("loopback");
    expect(refusal(policy, "::1")).toBeUndefined();
    expect(refusal(policy, "fd00::5")).toBeUndefined();
    expect(refusal(policy, "fc00::5")).toBe("uniqueLocal");
    expect(refusal(policy, "169.254.169.254")).toBe("linkLocal");
    expect(hostAllowed(policy, "metrics.internal")).toBe(true);
    expect(hostAllowed(policy, "METRICS.internal.")).toBe(true);
    expect(hostAllowed(policy, "other.internal")).toBe(false);
  });

  it("refuses a malformed allow-list entry by name", () => {
    expect(() => parseEgressAllow("10.0.0.0/33")).toThrow(/'10.0.0.0\/33' is not a CIDR/);
    expect(() => parseEgressAllow("http://x")).toThrow(/STEPWISE_EGRESS_ALLOW: 'http:\/\/x'/);
    expect(parseEgressAllow("")).toEqual(DENY_ALL_PRIVATE);
  });
});
