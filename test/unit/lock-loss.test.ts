import { ErrorCode } from "bullmq";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isLockLoss, lockLossReport } from "../../runtime/worker/lock-loss.js";

/** An error as BullMQ's finishedErrors builds it: its message and numeric code. */
function bullError(message: string, code: number): Error {
  return Object.assign(new Error(message), { code });
}

describe("isLockLoss", () => {
  it("knows BullMQ's refusals after a lost lock, by code", () => {
    expect(
      isLockLoss(bullError("Missing lock for job a. moveToFinished", ErrorCode.JobLockNotExist)),
    ).toBe(true);
    expect(
      isLockLoss(
        bullError(
          "Lock mismatch for job a. Cmd moveToDelayed from active",
          ErrorCode.JobLockMismatch,
        ),
      ),
    ).toBe(true);
    expect(
      isLockLoss(bullError("Missing key for job a. moveToFinished", ErrorCode.JobNotExist)),
    ).toBe(true);
    expect(
      isLockLoss(
        bullError("Job a is not in the active state. moveToFinished", ErrorCode.JobNotInState),
      ),
    ).toBe(true);
    expect(isLockLoss(new Error("could not renew lock for job a"))).toBe(true);
  });

  it("leaves every other error to onError", () => {
    expect(
      isLockLoss(bullError("Job a has pending dependencies. x", ErrorCode.JobPendingChildren)),
    ).toBe(false);
    expect(
      isLockLoss(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })),
    ).toBe(false);
    expect(isLockLoss(new Error("execution x: gave up on run 'y'"))).toBe(false);
    expect(isLockLoss("could not renew lock for job a")).toBe(false);
    expect(isLockLoss(undefined)).toBe(false);
  });
});

describe("lockLossReport", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const lines = () => {
    const warned: { fields: Record<string, unknown>; msg: string }[] = [];
    const log = {
      warn: (fields: Record<string, unknown>, msg: string) => warned.push({ fields, msg }),
      error: () => {},
    };
    return { warned, log: log as never };
  };

  it("warns at the first loss, then once per window with the count and an example", () => {
    const { warned, log } = lines();
    let lost = 0;
    const report = lockLossReport(log, 3000, () => (lost += 1), 10_000);
    report.add(new Error("could not renew lock for job a"));
    expect(warned).toHaveLength(1);
    expect(warned[0]!.fields).toEqual({ lockLost: 1, example: "could not renew lock for job a" });
    expect(warned[0]!.msg).toMatch(/^worker: 1 job outlived its 3000 ms lock \(STEPWISE_LOCK_MS\)/);
    for (const job of ["b", "c", "d"])
      report.add(new Error(`Missing lock for job ${job}. moveToFinished`));
    expect(warned).toHaveLength(1);
    vi.advanceTimersByTime(10_000);
    expect(warned).toHaveLength(2);
    expect(warned[1]!.fields).toEqual({
      lockLost: 3,
      example: "Missing lock for job d. moveToFinished",
    });
    expect(warned[1]!.msg).toMatch(/^worker: 3 jobs outlived their 3000 ms lock/);
    expect(lost).toBe(4);
    // A quiet window logs nothing, and the next loss is told at once again.
    vi.advanceTimersByTime(60_000);
    expect(warned).toHaveLength(2);
    report.add(new Error("could not renew lock for job e"));
    expect(warned).toHaveLength(3);
  });

  it("counts a job once per window, however many refusals its lost lock brings", () => {
    const { warned, log } = lines();
    let lost = 0;
    const report = lockLossReport(log, 3000, () => (lost += 1), 10_000);
    report.add(new Error("could not renew lock for job nap|b.1@0"));
    report.add(
      bullError("Missing lock for job nap|b.1@0. moveToFinished", ErrorCode.JobLockNotExist),
    );
    report.add(
      bullError(
        "Lock mismatch for job nap|b.1@0. Cmd moveToDelayed from active",
        ErrorCode.JobLockMismatch,
      ),
    );
    report.add(
      bullError(
        "Job nap|b.1@0 is not in the active state. moveToFinished",
        ErrorCode.JobNotInState,
      ),
    );
    report.add(bullError("Missing key for job nap|b.2@0. moveToFinished", ErrorCode.JobNotExist));
    report.add(new Error("could not renew lock for job nap|b.2@0"));
    vi.advanceTimersByTime(10_000);
    expect(lost).toBe(2);
    expect(warned.map((w) => w.fields.lockLost)).toEqual([1, 1]);
  });

  it("flush tells what the window counted so far, and nothing when it counted none", () => {
    const { warned, log } = lines();
    const report = lockLossReport(log, 3000);
    report.flush();
    expect(warned).toHaveLength(0);
    report.add(new Error("could not renew lock for job a"));
    report.add(new Error("could not renew lock for job b"));
    report.flush();
    expect(warned.map((w) => w.fields.lockLost)).toEqual([1, 1]);
    vi.advanceTimersByTime(20_000);
    expect(warned).toHaveLength(2);
  });
});
