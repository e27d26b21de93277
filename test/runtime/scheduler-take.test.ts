import { describe, expect, it } from "vitest";
import { makeKeys } from "../../runtime/store/keys.js";
import type { JobQueues } from "../../runtime/worker/queues.js";
import type { RedisClient } from "../../runtime/store/redis.js";
import { Scheduler } from "../../runtime/worker/scheduler.js";
import { resolveSettings } from "../../runtime/settings.js";

/**
 * How a worker takes the runs its commits wake (transition.ts `callHere`) into
 * its in-process advances: once per run, at the latest seq, one more pass for a
 * run woken while it was being advanced, and no more than room for two rounds.
 * The scheduler is not started (no claims): `take` only needs its fire function,
 * here one the test finishes by hand, and the queue for what it hands back.
 */
function scheduler(concurrency: number) {
  const fired: string[] = [];
  const pending = new Map<string, () => void>();
  const queued: string[] = [];
  const queues = { ensure: async (jobs: string) => void queued.push(jobs) } as unknown as JobQueues;
  const s = new Scheduler(
    {} as RedisClient,
    makeKeys("unused"),
    queues,
    resolveSettings({}),
    (err) => {
      throw err;
    },
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
  return { s, fired, queued, finish };
}

describe("Scheduler.take", () => {
  it("advances a run woken while it is advanced once more, from the latest seq", async () => {
    const { s, fired, finish } = scheduler(4);
    expect(s.take("p", 1)).toBe(true);
    expect(fired).toEqual(["p@1"]);
    // Three children end while the parent's advance runs: one more pass, not three.
    expect([s.take("p", 1), s.take("p", 2), s.take("p", 1)]).toEqual([true, true, true]);
    expect(fired).toEqual(["p@1"]);
    await finish("p@1");
    expect(fired).toEqual(["p@1", "p@2"]);
    await finish("p@2");
    expect(fired).toEqual(["p@1", "p@2"]);
  });

  it("keeps one waiting entry per run at its latest seq, and room for two rounds", async () => {
    const { s, fired, finish } = scheduler(1);
    expect(s.take("a", 0)).toBe(true);
    expect(s.take("b", 3)).toBe(true);
    expect(s.take("b", 5)).toBe(true);
    // One firing and one waiting fill the room of a concurrency of 1; b is known already.
    expect(s.take("c", 0)).toBe(false);
    expect(s.take("b", 4)).toBe(true);
    await finish("a@0");
    expect(fired).toEqual(["a@0", "b@5"]);
    await finish("b@5");
  });

  it("takes nothing once stopped, and hands its waiting runs to the queue", async () => {
    const { s, queued, finish } = scheduler(1);
    s.take("a", 0);
    s.take("b", 7);
    const stopping = s.stop(1_000);
    await new Promise((r) => setTimeout(r, 0));
    expect(s.take("c", 0)).toBe(false);
    await finish("a@0");
    await stopping;
    expect(queued.join(" ")).toContain("b@7");
  });
});
