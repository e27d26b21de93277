import { describe, expect, it } from "vitest";
import type { Retrier, TaskState } from "../../engine/core/definition.js";
import { seededRandom } from "../../engine/core/random.js";
import type { RunState } from "../../engine/core/run.js";
import { backoffMs, decideRetry } from "../../engine/flow/retry.js";
import type { MockResponse } from "../../engine/drivers/memory.js";
import { effectsOf, execute, gapsSeconds, ofType, only, single, Stepper } from "./helpers.js";

// ASL spec, "Retrying after error": the wait before retry n (n = 0, 1, …) is
// IntervalSeconds × BackoffRate^n (defaults 1 s, 2.0, 3 attempts), capped by
// MaxDelaySeconds; JitterStrategy FULL draws the wait uniformly from [0, that]
// (CDK JitterType.FULL: "a random number between 0 and the computed backoff").

const throws = (...errors: string[]): MockResponse[] =>
  errors.map((Error) => ({ Throw: { Error } }));

function retrying(retry: Retrier[], extra: Partial<TaskState> = {}): TaskState {
  return { Type: "Task", Resource: "r", Retry: retry, End: true, ...extra } as TaskState;
}

/** Seconds between the successive TaskScheduled events of an execution. */
async function scheduleGaps(
  retry: Retrier[],
  mocks: MockResponse[],
  seed = "seed",
): Promise<number[]> {
  const r = await execute(single(retrying(retry)), { mocks: { S: mocks }, seed });
  return gapsSeconds(ofType(r.history, "TaskScheduled"));
}

describe("retry backoff on the virtual clock", () => {
  it.each<[string, Retrier, number, number[]]>([
    ["defaults (1 s, ×2, 3 attempts)", { ErrorEquals: ["E"] }, 3, [1, 2, 4]],
    [
      "IntervalSeconds 2, BackoffRate 3",
      { ErrorEquals: ["E"], IntervalSeconds: 2, BackoffRate: 3 },
      3,
      [2, 6, 18],
    ],
    [
      "BackoffRate 1 keeps the interval",
      { ErrorEquals: ["E"], IntervalSeconds: 5, BackoffRate: 1 },
      3,
      [5, 5, 5],
    ],
    [
      "BackoffRate 1.5",
      { ErrorEquals: ["E"], IntervalSeconds: 2, BackoffRate: 1.5 },
      3,
      [2, 3, 4.5],
    ],
    [
      "MaxDelaySeconds caps the growth",
      {
        ErrorEquals: ["E"],
        IntervalSeconds: 1,
        BackoffRate: 10,
        MaxAttempts: 4,
        MaxDelaySeconds: 30,
      },
      4,
      [1, 10, 30, 30],
    ],
  ])("%s", async (_, retrier, retries, gaps) => {
    const mocks = [...throws(...Array<string>(retries).fill("E")), { Return: "ok" }];
    expect(await scheduleGaps([retrier], mocks)).toEqual(gaps);
  });

  it("an exhausted retrier fails the state after MaxAttempts retries", async () => {
    const r = await execute(single(retrying([{ ErrorEquals: ["E"], MaxAttempts: 2 }])), {
      mocks: { S: throws("E", "E", "E", "E") },
    });
    expect(r).toMatchObject({ status: "FAILED", error: "E" });
    expect(ofType(r.history, "TaskScheduled")).toHaveLength(3);
    expect(r.unusedMocks).toEqual({ S: 1 });
  });

  it("the first matching retrier decides; an exhausted one does not fall through", async () => {
    const r = await execute(
      single(
        retrying([
          { ErrorEquals: ["E"], MaxAttempts: 1, IntervalSeconds: 1 },
          { ErrorEquals: ["States.ALL"], MaxAttempts: 5, IntervalSeconds: 1 },
        ]),
      ),
      { mocks: { S: [...throws("E", "E"), { Return: "never" }] } },
    );
    expect(r).toMatchObject({ status: "FAILED", error: "E" });
    expect(ofType(r.history, "TaskScheduled")).toHaveLength(2);
  });

  it("each retrier counts its own attempts and backs off by its own count", async () => {
    const retry: Retrier[] = [
      { ErrorEquals: ["A"], IntervalSeconds: 1, BackoffRate: 2, MaxAttempts: 2 },
      { ErrorEquals: ["B"], IntervalSeconds: 10, BackoffRate: 3, MaxAttempts: 2 },
    ];
    // A (1st of A: 1 s), B (1st of B: 10 s), A (2nd of A: 2 s), B (2nd of B: 30 s), ok.
    const gaps = await scheduleGaps(retry, [...throws("A", "B", "A", "B"), { Return: 1 }]);
    expect(gaps).toEqual([1, 10, 2, 30]);
    // A third A exhausts the first retrier even though B still has attempts.
    const r = await execute(single(retrying(retry)), { mocks: { S: throws("A", "B", "A", "A") } });
    expect(r).toMatchObject({ status: "FAILED", error: "A" });
  });

  it("re-entering a state starts its retry counters afresh", async () => {
    let calls = 0;
    const r = await execute(
      {
        StartAt: "T",
        States: {
          T: {
            Type: "Task",
            Resource: "r",
            Retry: [{ ErrorEquals: ["E"], MaxAttempts: 1, IntervalSeconds: 1 }],
            Next: "Again",
          },
          Again: {
            Type: "Choice",
            Choices: [{ Variable: "$.n", NumericLessThan: 3, Next: "T" }],
            Default: "Done",
          },
          Done: { Type: "Succeed" },
        },
      },
      {
        input: { n: 0 },
        tasks: {
          // Every entry fails once, then succeeds: only possible if each entry may retry once.
          r: (input) => {
            calls += 1;
            if (calls % 2 === 1) throw { error: "E" };
            return { n: (input as { n: number }).n + 1 };
          },
        },
      },
    );
    expect(r).toMatchObject({ status: "SUCCEEDED", output: { n: 3 } });
    expect(calls).toBe(6);
  });

  it("the first retrier naming the error wins even when a later one would allow more", async () => {
    const gaps = await scheduleGaps(
      [
        { ErrorEquals: ["Other", "E"], IntervalSeconds: 7, MaxAttempts: 1 },
        { ErrorEquals: ["E"], IntervalSeconds: 1, MaxAttempts: 3 },
      ],
      [...throws("E"), { Return: 1 }],
    );
    expect(gaps).toEqual([7]);
  });
});

describe("JitterStrategy FULL", () => {
  const base: Retrier = {
    ErrorEquals: ["E"],
    IntervalSeconds: 4,
    BackoffRate: 2,
    JitterStrategy: "FULL",
  };

  it("draws every wait within [0, computed backoff], over many seeds and attempts", () => {
    const draws: number[] = [];
    for (let s = 0; s < 300; s++) {
      const random = seededRandom(`seed-${s}`);
      for (let made = 0; made < 5; made++) {
        const cap = 4000 * 2 ** made;
        const ms = backoffMs(base, made, random);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(cap);
        draws.push(ms / cap);
      }
    }
    // Uniform-ish: both halves of the range are used, and the draws are not constant.
    expect(draws.filter((d) => d < 0.5).length).toBeGreaterThan(draws.length * 0.35);
    expect(draws.filter((d) => d >= 0.5).length).toBeGreaterThan(draws.length * 0.35);
  });

  it("stays within MaxDelaySeconds", () => {
    const capped: Retrier = { ...base, MaxDelaySeconds: 5 };
    for (let s = 0; s < 300; s++) {
      const random = seededRandom(`cap-${s}`);
      for (let made = 0; made < 6; made++) {
        const ms = backoffMs(capped, made, random);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(5000);
      }
    }
  });

  it("end to end: every jittered gap is within its bound, and a seed replays the same gaps", async () => {
    const retry: Retrier[] = [{ ...base, MaxAttempts: 3, MaxDelaySeconds: 10 }];
    const mocks = () => [...throws("E", "E", "E"), { Return: "ok" }];
    const bounds = [4, 8, 10];
    const seen = new Set<string>();
    for (let s = 0; s < 40; s++) {
      const gaps = await scheduleGaps(retry, mocks(), `jitter-${s}`);
      expect(gaps).toHaveLength(3);
      gaps.forEach((g, i) => {
        expect(g).toBeGreaterThanOrEqual(0);
        expect(g).toBeLessThanOrEqual(bounds[i]!);
      });
      seen.add(gaps.join(","));
      expect(await scheduleGaps(retry, mocks(), `jitter-${s}`)).toEqual(gaps);
    }
    expect(seen.size).toBeGreaterThan(30);
  });
});

describe("decideRetry", () => {
  const random = seededRandom("x");
  const retriers: Retrier[] = [
    { ErrorEquals: ["A"], MaxAttempts: 0 },
    { ErrorEquals: ["States.TaskFailed"], MaxAttempts: 2, IntervalSeconds: 3 },
  ];

  it.each<[string, number[] | undefined, ReturnType<typeof decideRetry>]>([
    ["A", undefined, { retry: false }], // MaxAttempts 0 on the first matching retrier
    ["B", undefined, { retry: true, index: 1, delayMs: 3000 }],
    ["B", [0, 1], { retry: true, index: 1, delayMs: 6000 }],
    ["B", [0, 2], { retry: false }],
    ["States.Timeout", undefined, { retry: false }], // TaskFailed does not match Timeout
    ["States.Runtime", undefined, { retry: false }],
  ])("error %s with attempts %j → %j", (error, attempts, decision) => {
    expect(decideRetry(retriers, attempts, error, random)).toEqual(decision);
  });

  it("no Retry field means no retry", () => {
    expect(decideRetry(undefined, undefined, "E", random)).toEqual({ retry: false });
  });
});

describe("retry counters live in the run state", () => {
  /** A JSON round trip: what a durable driver stores and loads between events. */
  const reload = (s: Stepper): void => {
    s.runs.set(s.rootId, JSON.parse(JSON.stringify(s.run())) as RunState);
  };

  it("survive serializing the run between attempts, and still exhaust at MaxAttempts", () => {
    const s = new Stepper(
      single(retrying([{ ErrorEquals: ["E"], MaxAttempts: 2, IntervalSeconds: 1 }])),
    );
    let task = only(effectsOf(s.start(), "RunTask"));
    let runTasks = 1;
    for (;;) {
      const effects = s.send(s.rootId, { type: "TaskFailed", taskId: task.taskId, error: "E" });
      if (s.run().status !== "RUNNING") break;
      expect(s.run().current).toMatchObject({ retries: [runTasks], retryCount: runTasks });
      reload(s);
      const timer = only(effectsOf(effects, "ArmTimer"));
      s.now = timer.at;
      task = only(
        effectsOf(s.send(s.rootId, { type: "TimerFired", timerId: timer.timerId }), "RunTask"),
      );
      runTasks += 1;
      expect(task.attempt).toBe(runTasks - 1);
      reload(s);
    }
    expect(runTasks).toBe(3);
    expect(s.run()).toMatchObject({ status: "FAILED", error: "E" });
  });
});
