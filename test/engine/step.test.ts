import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { RunEventBody } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { RunState } from "../../engine/core/run.js";
import type { MemoryRunOptions } from "../../engine/drivers/memory.js";
import { compileProgram } from "../../engine/program.js";
import { replay } from "../../engine/replay.js";
import { childRun, newRun, step } from "../../engine/step.js";
import { deepFreeze, effectsOf, execute, only, single, Stepper } from "./helpers.js";

// DESIGN.md, "The one principle": `step` is pure. Given the same program, execution,
// run and event it returns the same result, and it never changes its arguments
// (the durable driver keeps the run it passed in as the committed state).

const MACHINES: [string, StateMachineDefinition, MemoryRunOptions][] = [
  [
    "pass, choice, wait, variables",
    {
      StartAt: "A",
      States: {
        A: {
          Type: "Pass",
          Assign: { n: 1 },
          Parameters: { "x.$": "$.x", "id.$": "States.UUID()" },
          Next: "C",
        },
        C: {
          Type: "Choice",
          Choices: [{ Variable: "$.x", NumericGreaterThan: 0, Next: "W", Assign: { m: 2 } }],
          Default: "F",
        },
        W: { Type: "Wait", Seconds: 3, Next: "S" },
        S: { Type: "Succeed" },
        F: { Type: "Fail", Error: "E" },
      },
    },
    { input: { x: 1 } },
  ],
  [
    "task with retry, jitter, catch",
    {
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: "r",
          TimeoutSeconds: 30,
          HeartbeatSeconds: 10,
          Retry: [{ ErrorEquals: ["E"], JitterStrategy: "FULL", MaxAttempts: 2 }],
          Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.err", Next: "H" }],
          End: true,
        },
        H: { Type: "Pass", End: true },
      },
    },
    {
      mocks: {
        T: [{ Throw: { Error: "E" } }, { Throw: { Error: "E" } }, { Throw: { Error: "E" } }],
      },
    },
  ],
  [
    "parallel and map with concurrency and a failure",
    {
      StartAt: "P",
      States: {
        P: {
          Type: "Parallel",
          Branches: [
            {
              StartAt: "M",
              States: {
                M: {
                  Type: "Map",
                  MaxConcurrency: 2,
                  ItemsPath: "$.items",
                  ItemSelector: { "i.$": "$$.Map.Item.Index", "v.$": "$$.Map.Item.Value" },
                  ItemProcessor: {
                    StartAt: "W",
                    States: { W: { Type: "Wait", SecondsPath: "$.v", End: true } },
                  },
                  End: true,
                },
              },
            },
            {
              StartAt: "W2",
              States: {
                W2: { Type: "Wait", Seconds: 4, Next: "F" },
                F: { Type: "Fail", Error: "Late" },
              },
            },
          ],
          Catch: [{ ErrorEquals: ["States.ALL"], Next: "Done" }],
          End: true,
        },
        Done: { Type: "Pass", End: true },
      },
    },
    { input: { items: [1, 2, 3, 4, 5] } },
  ],
  [
    "waitForTaskToken",
    {
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: "cb.waitForTaskToken",
          Parameters: { "token.$": "$$.Task.Token" },
          End: true,
        },
      },
    },
    { tasks: { cb: (input) => input } },
  ],
];

describe("step is pure", () => {
  it.each(MACHINES)(
    "%s: same inputs give deep-equal results and nothing is mutated",
    async (_, definition, options) => {
      const r = await execute(definition, options);
      expect(r.journal.length).toBeGreaterThanOrEqual(3);
      const program = deepFreeze(compileProgram(structuredClone(definition)));
      const execution = deepFreeze(structuredClone(r.execution));
      const runs = new Map<string, RunState>([
        [execution.executionId, newRun(execution.executionId, "")],
      ]);
      const history: HistoryEvent[] = [];
      for (const entry of structuredClone(r.journal)) {
        const run = deepFreeze(runs.get(entry.runId)!);
        const event = deepFreeze(entry.event);
        const snapshot = structuredClone(run);
        const first = step(program, execution, run, event);
        const second = step(program, execution, run, event);
        expect(second).toEqual(first);
        expect(run).toEqual(snapshot);
        runs.set(entry.runId, first.run);
        history.push(...first.history);
        for (const effect of first.effects) {
          if (effect.type !== "SpawnChildren") continue;
          for (const child of effect.children) {
            runs.set(child.runId, childRun(effect.runId, child, first.run.lastEventId));
          }
        }
      }
      // The frozen re-run rebuilt exactly what the driver recorded.
      expect(history).toEqual(r.history);
    },
  );

  it("replaying the journal rebuilds the same runs and history", async () => {
    for (const [, definition, options] of MACHINES) {
      const r = await execute(definition, options);
      const rebuilt = replay(compileProgram(definition), r.execution, r.journal);
      expect(rebuilt.history).toEqual(r.history);
      expect(rebuilt.runs).toEqual(r.runs);
    }
  });

  it("two executions with the same seed, clock and nonces record the same history", async () => {
    for (const [, definition, options] of MACHINES) {
      const a = await execute(definition, options);
      const b = await execute(definition, options);
      expect(b.history).toEqual(a.history);
      expect(b.output).toEqual(a.output);
    }
  });
});

// step's contract (engine/step.ts): "Events that no longer apply (a stale task result,
// a timer of a finished state) change nothing." A durable driver redelivers and races
// events, so each of these must leave the run, the history and the effects untouched.

/** Delivers `body` and checks that it changed nothing at all. */
function expectNoChange(s: Stepper, runId: string, body: RunEventBody): void {
  const before = structuredClone(s.run(runId));
  const historyBefore = s.history.length;
  const result = s.deliver(runId, body);
  expect(result.history).toEqual([]);
  expect(result.effects).toEqual([]);
  expect(result.run).toEqual(before);
  expect(s.history).toHaveLength(historyBefore);
}

describe("stale task events", () => {
  const machine = single({
    Type: "Task",
    Resource: "r",
    TimeoutSeconds: 60,
    Retry: [{ ErrorEquals: ["E"], IntervalSeconds: 5 }],
    End: true,
  });

  it("a TaskSucceeded, TaskFailed or TaskHeartbeat with a wrong taskId changes nothing", () => {
    const s = new Stepper(machine);
    const task = only(effectsOf(s.start(), "RunTask"));
    expectNoChange(s, s.rootId, { type: "TaskSucceeded", taskId: `${task.taskId}x`, output: 1 });
    expectNoChange(s, s.rootId, { type: "TaskFailed", taskId: "nope", error: "E" });
    expectNoChange(s, s.rootId, { type: "TaskHeartbeat", taskId: "nope" });
    // The real result still completes the task.
    s.send(s.rootId, { type: "TaskSucceeded", taskId: task.taskId, output: "real" });
    expect(s.run()).toMatchObject({ status: "SUCCEEDED", output: "real" });
  });

  it("a late result of a failed attempt is ignored during the backoff and the next attempt", () => {
    const s = new Stepper(machine);
    const first = only(effectsOf(s.start(), "RunTask"));
    const backoff = only(
      effectsOf(
        s.send(s.rootId, { type: "TaskFailed", taskId: first.taskId, error: "E" }),
        "ArmTimer",
      ).filter((t) => t.purpose === "retry"),
    );
    expectNoChange(s, s.rootId, { type: "TaskSucceeded", taskId: first.taskId, output: "late" });
    s.now = backoff.at;
    const second = only(
      effectsOf(s.send(s.rootId, { type: "TimerFired", timerId: backoff.timerId }), "RunTask"),
    );
    expect(second.taskId).not.toBe(first.taskId);
    expectNoChange(s, s.rootId, { type: "TaskSucceeded", taskId: first.taskId, output: "late" });
    expectNoChange(s, s.rootId, { type: "TaskFailed", taskId: first.taskId, error: "E" });
    s.send(s.rootId, { type: "TaskSucceeded", taskId: second.taskId, output: "second" });
    expect(s.run()).toMatchObject({ status: "SUCCEEDED", output: "second" });
  });

  it("a redelivered result after the task completed changes nothing", () => {
    const s = new Stepper({
      StartAt: "T",
      States: {
        T: { Type: "Task", Resource: "r", Next: "W" },
        W: { Type: "Wait", Seconds: 10, End: true },
      },
    });
    const task = only(effectsOf(s.start(), "RunTask"));
    s.send(s.rootId, { type: "TaskSucceeded", taskId: task.taskId, output: 1 });
    expect(s.run().current?.name).toBe("W");
    expectNoChange(s, s.rootId, { type: "TaskSucceeded", taskId: task.taskId, output: 2 });
    expectNoChange(s, s.rootId, { type: "TaskFailed", taskId: task.taskId, error: "E" });
  });
});

describe("stale timers", () => {
  it("a TimerFired with an unknown timerId changes nothing; the real one still fires", () => {
    const s = new Stepper(single({ Type: "Wait", Seconds: 10, End: true }));
    const timer = only(effectsOf(s.start(), "ArmTimer"));
    s.now = timer.at;
    expectNoChange(s, s.rootId, { type: "TimerFired", timerId: "unknown" });
    expectNoChange(s, s.rootId, { type: "TimerFired", timerId: `${timer.timerId}0` });
    s.send(s.rootId, { type: "TimerFired", timerId: timer.timerId });
    expect(s.run().status).toBe("SUCCEEDED");
    // Once the run ended, even its own timer changes nothing.
    expectNoChange(s, s.rootId, { type: "TimerFired", timerId: timer.timerId });
  });

  it("a task's timeout timer firing after the task succeeded changes nothing", () => {
    const s = new Stepper({
      StartAt: "T",
      States: {
        T: { Type: "Task", Resource: "r", TimeoutSeconds: 5, Next: "W" },
        W: { Type: "Wait", Seconds: 60, End: true },
      },
    });
    const started = s.start();
    const task = only(effectsOf(started, "RunTask"));
    const timeout = only(effectsOf(started, "ArmTimer"));
    const done = s.send(s.rootId, { type: "TaskSucceeded", taskId: task.taskId, output: {} });
    expect(effectsOf(done, "CancelTimer").map((c) => c.timerId)).toEqual([timeout.timerId]);
    s.now = timeout.at;
    expectNoChange(s, s.rootId, { type: "TimerFired", timerId: timeout.timerId });
    expect(s.run().current?.name).toBe("W");
  });

  it("an old backoff timer firing while the next attempt runs changes nothing", () => {
    const s = new Stepper(
      single({ Type: "Task", Resource: "r", Retry: [{ ErrorEquals: ["E"] }], End: true }),
    );
    const first = only(effectsOf(s.start(), "RunTask"));
    const backoff = only(
      effectsOf(
        s.send(s.rootId, { type: "TaskFailed", taskId: first.taskId, error: "E" }),
        "ArmTimer",
      ),
    );
    s.now = backoff.at;
    const second = only(
      effectsOf(s.send(s.rootId, { type: "TimerFired", timerId: backoff.timerId }), "RunTask"),
    );
    expectNoChange(s, s.rootId, { type: "TimerFired", timerId: backoff.timerId });
    expect(s.run().current?.phase).toMatchObject({ kind: "task", taskId: second.taskId });
  });
});

describe("stale child events", () => {
  const machine = single({
    Type: "Parallel",
    Branches: [
      { StartAt: "F", States: { F: { Type: "Fail", Error: "E" } } },
      { StartAt: "W", States: { W: { Type: "Wait", Seconds: 100, End: true } } },
    ],
    Retry: [{ ErrorEquals: ["E"], IntervalSeconds: 1 }],
    End: true,
  });

  it("a ChildEnded from a previous attempt's join changes nothing", () => {
    const s = new Stepper(machine);
    const firstSpawn = only(effectsOf(s.start(), "SpawnChildren"));
    const [failed, waiting] = firstSpawn.children;
    // The failing branch ended at once; the parent applied it and backs off.
    expect(s.run(failed!.runId).status).toBe("FAILED");
    const ended = s.send(s.rootId, {
      type: "ChildEnded",
      childRunId: failed!.runId,
      index: 0,
      outcome: { status: "FAILED", error: "E" },
    });
    // The driver stops the started children that are still running (here: the waiting one).
    expect(effectsOf(ended, "StopChildren")).toEqual([
      {
        type: "StopChildren",
        runId: s.rootId,
        prefix: waiting!.runId.slice(0, waiting!.runId.lastIndexOf("/")),
        started: 2,
      },
    ]);
    const backoff = only(effectsOf(ended, "ArmTimer"));
    // While backing off, the stopped branch reports back.
    expectNoChange(s, s.rootId, {
      type: "ChildEnded",
      childRunId: waiting!.runId,
      index: 1,
      outcome: { status: "ABORTED" },
    });
    s.now = backoff.at;
    const secondSpawn = only(
      effectsOf(
        s.send(s.rootId, { type: "TimerFired", timerId: backoff.timerId }),
        "SpawnChildren",
      ),
    );
    expect(secondSpawn.children.map((c) => c.runId)).not.toContain(waiting!.runId);
    // During the second attempt, the old branch's (even successful) end is ignored.
    expectNoChange(s, s.rootId, {
      type: "ChildEnded",
      childRunId: waiting!.runId,
      index: 1,
      outcome: { status: "SUCCEEDED" },
    });
    expect(s.run().current?.phase.kind).toBe("children");
  });

  // The parent only counts its children's ends (engine/flow/join.ts): the driver keeps
  // them and tells the parent of each exactly once. What the parent can still tell
  // stale is an end of a child its join never started.
  it("a ChildEnded for a child the join has not started changes nothing", () => {
    const s = new Stepper(
      single({
        Type: "Map",
        MaxConcurrency: 1,
        ItemProcessor: {
          StartAt: "W",
          States: { W: { Type: "Wait", Seconds: 100, End: true } },
        },
        End: true,
      }),
      [1, 2, 3],
    );
    const spawn = only(effectsOf(s.start(), "SpawnChildren"));
    const first = only(spawn.children);
    const prefix = first.runId.slice(0, first.runId.lastIndexOf("/"));
    for (const index of [1, 2, 7]) {
      expectNoChange(s, s.rootId, {
        type: "ChildEnded",
        childRunId: `${prefix}/${index}`,
        index,
        outcome: { status: "SUCCEEDED" },
      });
    }
    expect(s.run().current?.phase).toMatchObject({
      kind: "children",
      join: { started: 1, succeeded: 0, failed: 0 },
    });
  });

  it("the last child's end asks for the outputs; the state ends when they arrive", () => {
    const s = new Stepper(
      single({
        Type: "Parallel",
        Branches: [
          { StartAt: "A", States: { A: { Type: "Pass", Result: "a", End: true } } },
          { StartAt: "B", States: { B: { Type: "Pass", Result: "b", End: true } } },
        ],
        End: true,
      }),
    );
    const spawn = only(effectsOf(s.start(), "SpawnChildren"));
    const [a, b] = spawn.children;
    const prefix = a!.runId.slice(0, a!.runId.lastIndexOf("/"));
    s.send(s.rootId, {
      type: "ChildEnded",
      childRunId: a!.runId,
      index: 0,
      outcome: { status: "SUCCEEDED" },
    });
    const last = s.send(s.rootId, {
      type: "ChildEnded",
      childRunId: b!.runId,
      index: 1,
      outcome: { status: "SUCCEEDED" },
    });
    expect(last).toEqual([{ type: "CollectResults", runId: s.rootId, prefix, total: 2 }]);
    expect(s.run().current?.phase).toEqual({ kind: "collecting", prefix, total: 2 });
    // Outputs for another join (an earlier attempt's) change nothing.
    expectNoChange(s, s.rootId, {
      type: "ResultsCollected",
      prefix: `${prefix}0`,
      outputs: ["x", "y"],
    });
    s.send(s.rootId, { type: "ResultsCollected", prefix, outputs: ["a", "b"] });
    expect(s.run()).toMatchObject({ status: "SUCCEEDED", output: ["a", "b"] });
  });
});

describe("other events that no longer apply", () => {
  it("a second Started, or a Continue outside the entering phase, changes nothing", () => {
    const s = new Stepper(single({ Type: "Wait", Seconds: 5, End: true }));
    s.start();
    expectNoChange(s, s.rootId, { type: "Started", input: { again: true } });
    expectNoChange(s, s.rootId, { type: "Continue" });
  });

  it("a Stop for a run that already ended changes nothing", () => {
    const s = new Stepper(single({ Type: "Pass", End: true }));
    s.start();
    expect(s.run().status).toBe("SUCCEEDED");
    expectNoChange(s, s.rootId, { type: "Stop" });
  });
});

describe("Stop", () => {
  it("cancels what the run waits for and records ExecutionAborted", () => {
    const s = new Stepper(single({ Type: "Task", Resource: "r", TimeoutSeconds: 9, End: true }));
    const started = s.start();
    const task = only(effectsOf(started, "RunTask"));
    const timer = only(effectsOf(started, "ArmTimer"));
    const stopped = s.send(s.rootId, { type: "Stop", error: "User", cause: "stopped by test" });
    expect(effectsOf(stopped, "CancelTimer").map((c) => c.timerId)).toEqual([timer.timerId]);
    expect(effectsOf(stopped, "CancelTask").map((c) => c.taskId)).toEqual([task.taskId]);
    expect(s.run().status).toBe("ABORTED");
    const last = s.history[s.history.length - 1]!;
    expect(last.type).toBe("ExecutionAborted");
    expect(last.executionAbortedEventDetails).toEqual({ error: "User", cause: "stopped by test" });
    // The task's answer after the stop changes nothing.
    expectNoChange(s, s.rootId, { type: "TaskSucceeded", taskId: task.taskId, output: 1 });
  });
});
