import { describe, expect, it } from "vitest";
import { Admission, TokenBucket } from "../../api/admission.js";
import { loadConfig } from "../../config/index.js";

/** Admission control's arithmetic on an injected clock (the API test is e2e/admission.test.ts). */
describe("admission control", () => {
  it("a bucket gives its burst, then refills at its rate", () => {
    const bucket = new TokenBucket(2, 3, 0);
    for (let i = 0; i < 3; i++) {
      expect(bucket.wait(0)).toBe(0);
      bucket.take(0);
    }
    expect(bucket.wait(0)).toBe(500);
    expect(bucket.wait(500)).toBe(0);
    expect(bucket.full(10_000)).toBe(true);
  });

  it("refuses past the key's or the machine's bucket, naming which, without spending the other", async () => {
    let now = 0;
    const admission = new Admission({ rate: 1, burst: 2, maxBacklog: 0 }, undefined, () => now);
    await admission.admit("alice", "a");
    await admission.admit("alice", "b");
    await expect(admission.admit("alice", "c")).rejects.toMatchObject({
      code: "ThrottlingException",
      status: 429,
      retryAfterSeconds: 1,
      message: expect.stringContaining("for key alice"),
    });
    // Machine c's bucket was not spent by the refusal: bob still gets two starts there.
    await admission.admit("bob", "c");
    await admission.admit("bob", "c");
    await expect(admission.admit("carol", "c")).rejects.toMatchObject({
      message: expect.stringContaining("for state machine c"),
    });
    now = 1000;
    await admission.admit("alice", "d");
  });

  it("refuses above the backlog, reading it at most every half second", async () => {
    let now = 0;
    let reads = 0;
    let waiting = 10;
    const admission = new Admission(
      { rate: 0, burst: 1, maxBacklog: 10 },
      async () => {
        reads++;
        return waiting;
      },
      () => now,
    );
    await admission.admit(undefined, "m");
    waiting = 11;
    await admission.admit(undefined, "m"); // the cached read still says 10
    now = 600;
    await expect(admission.admit(undefined, "m")).rejects.toMatchObject({
      message: expect.stringContaining(
        "11 transitions wait for a worker (STEPWISE_MAX_BACKLOG 10)",
      ),
    });
    expect(reads).toBe(2);
  });

  it("reads its settings from the environment and refuses bad ones by name", () => {
    const admission = (env: Record<string, string>) => loadConfig(env).api.admission;
    expect(admission({})).toEqual({ rate: 300, burst: 1300, maxBacklog: 100_000 });
    expect(admission({ STEPWISE_START_RATE: "0" }).rate).toBe(0);
    expect(() => admission({ STEPWISE_MAX_BACKLOG: "lots" })).toThrow(/STEPWISE_MAX_BACKLOG/);
  });
});
