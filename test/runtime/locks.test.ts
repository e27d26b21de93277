import { describe, expect, it } from "vitest";
import { ExecutionLocks } from "../../runtime/commit/commit-locks.js";

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("ExecutionLocks", () => {
  it("gives one execution's commits turns, in arrival order, and other executions their own", async () => {
    const locks = new ExecutionLocks();
    const log: string[] = [];
    const turn = (exec: string, id: string, ms: number) =>
      locks.run(exec, async () => {
        log.push(`${id}+`);
        await tick(ms);
        log.push(`${id}-`);
      });
    await Promise.all([
      turn("a", "a1", 20),
      turn("a", "a2", 1),
      turn("b", "b1", 5),
      turn("a", "a3", 1),
    ]);
    const a = log.filter((e) => e.startsWith("a"));
    expect(a).toEqual(["a1+", "a1-", "a2+", "a2-", "a3+", "a3-"]);
    // b ran while a1 held a's turn.
    expect(log.indexOf("b1-")).toBeLessThan(log.indexOf("a1-"));
  });

  it("remembers the history head only while turns are queued, and never goes below what was loaded", async () => {
    const locks = new ExecutionLocks();
    const at = (count: number) => ({ count, hash: `h${count}` });
    let inner: Promise<void> | undefined;
    await locks.run("x", async () => {
      locks.committed("x", at(10));
      expect(locks.historyHead("x", at(7))).toEqual(at(10));
      expect(locks.historyHead("x", at(12))).toEqual(at(12));
      inner = locks.run("x", async () => {
        expect(locks.historyHead("x", at(3))).toEqual(at(10));
      });
    });
    await inner;
    expect(locks.historyHead("x", at(3))).toEqual(at(3));
  });

  it("releases the turn when the work throws", async () => {
    const locks = new ExecutionLocks();
    await expect(locks.run("x", async () => Promise.reject(new Error("boom")))).rejects.toThrow(
      "boom",
    );
    await expect(locks.run("x", async () => 42)).resolves.toBe(42);
  });
});
