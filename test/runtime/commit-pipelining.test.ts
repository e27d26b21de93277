import { describe, expect, it } from "vitest";
import { ExecutionLocks } from "../../runtime/commit/commit-locks.js";
import { rememberInputs, takeInput } from "../../runtime/commit/kept-inputs.js";
import { makeKeys } from "../../runtime/store/keys.js";
import type { RedisClient } from "../../runtime/store/redis.js";
import type { JobQueues } from "../../runtime/worker/queues.js";
import { Scheduler } from "../../runtime/worker/scheduler.js";
import { resolveSettings } from "../../runtime/settings.js";

/**
 * Issue 43, wide inline Maps: one execution's commits are planned in turns but sent
 * pipelined (commit/commit-locks.ts `sent` / `settled`), and a worker keeps the runs
 * of executions it is advancing past its room (worker/scheduler.ts `take`).
 */
const at = (count: number) => ({ count, hash: `h${count}` });

describe("ExecutionLocks, pipelined", () => {
  it("plans the next commit on the head the last one sent leaves, before its reply", async () => {
    const locks = new ExecutionLocks();
    const first = await locks.run("x", async () => {
      expect(locks.historyHead("x", at(5))).toEqual(at(5));
      return locks.sent("x", at(7));
    });
    // The turn is over, the commit still in flight: the next plan counts on it.
    const second = await locks.run("x", async () => {
      expect(locks.historyHead("x", at(5))).toEqual(at(7));
      return locks.sent("x", at(9));
    });
    locks.settled("x", first, "committed");
    locks.settled("x", second, "committed");
    // Nothing in flight, no turn queued: forgotten, the next plan uses its load.
    expect(locks.historyHead("x", at(3))).toEqual(at(3));
  });

  it("resets the head once per generation when a commit wrote nothing", async () => {
    const locks = new ExecutionLocks();
    const a = await locks.run("x", async () => locks.sent("x", at(7)));
    const b = await locks.run("x", async () => locks.sent("x", at(9)));
    // Another process wrote first: a raced at Redis's head 6; b, planned behind a, will race too.
    locks.settled("x", a, at(6));
    const c = await locks.run("x", async () => {
      expect(locks.historyHead("x", at(5))).toEqual(at(6));
      return locks.sent("x", at(8));
    });
    // b's race was foreseen by a's reset: it does not undo c's head.
    locks.settled("x", b, at(6));
    await locks.run("x", async () => expect(locks.historyHead("x", at(5))).toEqual(at(8)));
    locks.settled("x", c, "committed");
  });

  it("forgets a head a commit that wrote nothing had planned, when Redis named none", async () => {
    const locks = new ExecutionLocks();
    const a = await locks.run("x", async () => locks.sent("x", at(7)));
    const b = await locks.run("x", async () => locks.sent("x", at(9)));
    locks.settled("x", a, undefined);
    await locks.run("x", async () => expect(locks.historyHead("x", at(5))).toEqual(at(5)));
    locks.settled("x", b, at(5));
  });
});

describe("kept inputs", () => {
  it("hands each kept input out once, and forgets the join with its last", () => {
    rememberInputs("join-a", 2, ["10", "11"]);
    rememberInputs("join-a", 4, ["12"]);
    expect(takeInput("join-a", 3)).toBe("11");
    expect(takeInput("join-a", 3)).toBeUndefined();
    expect(takeInput("join-a", 1)).toBeUndefined();
    expect(takeInput("join-a", 2)).toBe("10");
    expect(takeInput("join-a", 4)).toBe("12");
    expect(takeInput("join-a", 4)).toBeUndefined();
  });
});

function scheduler(concurrency: number) {
  const fired: string[] = [];
  const pending = new Map<string, () => void>();
  const queues = { ensure: async () => {} } as unknown as JobQueues;
  const s = new Scheduler(
    {} as RedisClient,
    makeKeys("unused"),
    queues,
    resolveSettings({}),
    undefined,
    {
      concurrency,
      fire: (run, seq) => {
        fired.push(`${run}@${seq}`);
        return new Promise<void>((resolve) => pending.set(`${run}@${seq}`, resolve));
      },
    },
  );
  const finish = async (job: string) => {
    pending.get(job)!();
    pending.delete(job);
    await new Promise((r) => setTimeout(r, 0));
  };
  return { s, fired, finish };
}

describe("Scheduler.take past its room", () => {
  it("keeps the runs of an execution it advances, after the backlog; refuses others'", async () => {
    const { s, fired, finish } = scheduler(1);
    expect(s.take("m/1/0", 0)).toBe(true);
    expect(s.take("m/1/1", 0)).toBe(true);
    // Full (one firing, one waiting): another execution's run goes to the queue…
    expect(s.take("other", 0)).toBe(false);
    // …while the Map's siblings wait here, whatever the room.
    expect(s.take("m/1/2", 0)).toBe(true);
    expect(s.take("m/1/3", 0)).toBe(true);
    await finish("m/1/0@0");
    await finish("m/1/1@0");
    await finish("m/1/2@0");
    await finish("m/1/3@0");
    expect(fired).toEqual(["m/1/0@0", "m/1/1@0", "m/1/2@0", "m/1/3@0"]);
    // Nothing of `m` left here: room rules again.
    expect(s.take("other", 0)).toBe(true);
    await finish("other@0");
  });

  it("keeps what a commit of this process woke of its own execution (`keep`), room or not", async () => {
    const { s, fired, finish } = scheduler(1);
    expect(s.take("a", 0)).toBe(true);
    expect(s.take("b", 0)).toBe(true);
    // `p` is advanced by a queue job here, not by the scheduler: its woken runs are kept.
    expect(s.take("p/1/0", 0, undefined, true)).toBe(true);
    // Held past the room counts for other executions' runs.
    await finish("a@0");
    expect(s.take("c", 0)).toBe(false);
    await finish("b@0");
    await finish("p/1/0@0");
    expect(fired).toEqual(["a@0", "b@0", "p/1/0@0"]);
  });
});
