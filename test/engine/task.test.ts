import { describe, expect, it } from "vitest";
import type { TaskState } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import type { TaskInvocation } from "../../engine/drivers/memory.js";
import {
  at,
  details,
  effectsOf,
  execute,
  ofType,
  only,
  single,
  Stepper,
  types,
  within,
} from "./helpers.js";

const LAMBDA = "arn:aws:states:::lambda:invoke";

function task(extra: Partial<TaskState> = {}): TaskState {
  return { Type: "Task", Resource: "work", End: true, ...extra } as TaskState;
}

/** A handler that fails with `{error, cause}` for the first `failures` calls, then returns `result`. */
function flaky(failures: number, error: string, result: Json = "ok") {
  const calls: { input: Json; invocation: TaskInvocation }[] = [];
  const handler = (input: Json, invocation: TaskInvocation): Json => {
    calls.push({ input, invocation });
    if (calls.length <= failures) throw { error, cause: `attempt ${calls.length} failed` };
    return result;
  };
  return { handler, calls };
}

describe("Task state with mocked responses", () => {
  it("takes the mocked result and runs it through ResultSelector, ResultPath and OutputPath", async () => {
    const r = await execute(
      single({
        Type: "Task",
        Resource: LAMBDA,
        ResultSelector: { "code.$": "$.StatusCode", "body.$": "$.Payload.body" },
        ResultPath: "$.result",
        OutputPath: "$.result",
        End: true,
      }),
      { input: { a: 1 }, mocks: { S: [{ Return: { StatusCode: 200, Payload: { body: "hi" } } }] } },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual({ code: 200, body: "hi" });
    expect(r.unusedMocks).toEqual({});
  });

  it("a Throw fails the execution with the mocked error and cause", async () => {
    const r = await execute(single(task({ Resource: LAMBDA })), {
      mocks: { S: [{ Throw: { Error: "Lambda.Unknown", Cause: "boom" } }] },
    });
    expect(r).toMatchObject({ status: "FAILED", error: "Lambda.Unknown", cause: "boom" });
  });

  it("consumes one mock entry per attempt, retries included", async () => {
    const r = await execute(
      single(task({ Resource: LAMBDA, Retry: [{ ErrorEquals: ["E"], IntervalSeconds: 1 }] })),
      {
        mocks: {
          S: [{ Throw: { Error: "E" } }, { Throw: { Error: "E" } }, { Return: 3 }, { Return: 4 }],
        },
      },
    );
    expect(r.output).toBe(3);
    expect(r.unusedMocks).toEqual({ S: 1 });
  });
});

describe("Task state with in-process handlers", () => {
  it("sends the Parameters to the handler and returns its result", async () => {
    const seen: Json[] = [];
    const r = await execute(single(task({ Parameters: { "x.$": "$.a", fixed: true } })), {
      input: { a: 1 },
      tasks: {
        work: async (input) => {
          seen.push(input);
          return { got: input };
        },
      },
    });
    expect(seen).toEqual([{ x: 1, fixed: true }]);
    expect(r.output).toEqual({ got: { x: 1, fixed: true } });
  });

  it("finds the handler by the resource without its .sync suffix", async () => {
    const r = await execute(single(task({ Resource: "arn:aws:states:::ecs:runTask.sync" })), {
      tasks: { "arn:aws:states:::ecs:runTask": () => "synced" },
    });
    expect(r.output).toBe("synced");
  });

  it("retries a failing handler and succeeds, telling the handler its attempt number", async () => {
    const { handler, calls } = flaky(2, "Transient");
    const r = await execute(
      single(task({ Retry: [{ ErrorEquals: ["Transient"], IntervalSeconds: 1, MaxAttempts: 3 }] })),
      { tasks: { work: handler } },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toBe("ok");
    expect(calls.map((c) => c.invocation.attempt)).toEqual([0, 1, 2]);
    // Each attempt has its own idempotency key.
    expect(new Set(calls.map((c) => c.invocation.taskId)).size).toBe(3);
    expect(types(r.history)).toEqual([
      "ExecutionStarted",
      "TaskStateEntered",
      "TaskScheduled",
      "TaskStarted",
      "TaskFailed",
      "TaskScheduled",
      "TaskStarted",
      "TaskFailed",
      "TaskScheduled",
      "TaskStarted",
      "TaskSucceeded",
      "TaskStateExited",
      "ExecutionSucceeded",
    ]);
  });

  it("fails with the handler's error once the retrier is exhausted", async () => {
    const { handler, calls } = flaky(10, "Transient");
    const r = await execute(
      single(task({ Retry: [{ ErrorEquals: ["Transient"], IntervalSeconds: 1, MaxAttempts: 2 }] })),
      { tasks: { work: handler } },
    );
    expect(calls).toHaveLength(3); // the first attempt and two retries
    expect(r).toMatchObject({ status: "FAILED", error: "Transient", cause: "attempt 3 failed" });
  });

  it("catches the error and merges the error output at the catcher's ResultPath", async () => {
    const { handler } = flaky(1, "Broken");
    const r = await execute(
      {
        StartAt: "T",
        States: {
          T: task({
            End: undefined,
            Next: "Done",
            Catch: [{ ErrorEquals: ["Broken"], ResultPath: "$.err", Next: "Recover" }],
          }),
          Recover: { Type: "Pass", End: true },
          Done: { Type: "Pass", Result: "not here", End: true },
        },
      },
      { input: { keep: 1 }, tasks: { work: handler } },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual({ keep: 1, err: { Error: "Broken", Cause: "attempt 1 failed" } });
    // The caught state exits to the catcher's Next.
    const exited = only(ofType(r.history, "TaskStateExited"));
    expect(details(exited).name).toBe("T");
  });

  it("a catcher without ResultPath passes the error output alone", async () => {
    const r = await execute(
      {
        StartAt: "T",
        States: {
          T: task({
            End: undefined,
            Next: "R",
            Catch: [{ ErrorEquals: ["States.ALL"], Next: "R" }],
          }),
          R: { Type: "Pass", End: true },
        },
      },
      { input: { keep: 1 }, mocks: { T: [{ Throw: { Error: "X", Cause: "why" } }] } },
    );
    expect(r.output).toEqual({ Error: "X", Cause: "why" });
  });

  it("an error reported without a cause gives an error output without Cause", async () => {
    // AWS developer guide, "Use ResultPath to Include Both Error and Input in a Catch":
    // input {"foo": "bar"}, output {"foo": "bar", "error": {"Error": "Error here"}}.
    const r = await execute(
      {
        StartAt: "T",
        States: {
          T: task({
            End: undefined,
            Next: "R",
            Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.error", Next: "R" }],
          }),
          R: { Type: "Pass", End: true },
        },
      },
      { input: { foo: "bar" }, mocks: { T: [{ Throw: { Error: "Error here" } }] } },
    );
    expect(r.output).toEqual({ foo: "bar", error: { Error: "Error here" } });
  });

  it("a thrown Error names the error by the exception's class", async () => {
    class QuotaError extends Error {
      override name = "QuotaError";
    }
    const r = await execute(single(task()), {
      tasks: {
        work: () => {
          throw new QuotaError("over quota");
        },
      },
    });
    expect(r).toMatchObject({ status: "FAILED", error: "QuotaError", cause: "over quota" });
  });

  it("a resource with no handler fails with States.TaskFailed", async () => {
    const r = await execute(single(task({ Resource: "nobody" })), { tasks: {} });
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("States.TaskFailed");
    expect(r.cause).toContain("nobody");
  });
});

describe("Task state: error matching", () => {
  // AWS "Error names": States.TaskFailed "matches any known error name except for
  // States.Timeout"; States.ALL "can't catch the States.DataLimitExceeded terminal
  // error and Runtime error types".
  const machine = (errorEquals: string[]) => ({
    StartAt: "T",
    States: {
      T: task({
        End: undefined,
        Next: "Ok",
        Catch: [{ ErrorEquals: errorEquals, Next: "Caught" }],
      }),
      Ok: { Type: "Pass" as const, End: true },
      Caught: { Type: "Pass" as const, Result: "caught", End: true },
    },
  });

  it.each<[string[], string, boolean]>([
    [["States.TaskFailed"], "Custom.Error", true],
    [["States.TaskFailed"], "States.TaskFailed", true],
    [["States.TaskFailed"], "States.Timeout", false],
    [["States.Timeout"], "States.Timeout", true],
    [["States.Timeout"], "Custom.Error", false],
    [["States.ALL"], "States.Timeout", true],
    [["States.ALL"], "Custom.Error", true],
    [["Custom.Error"], "Custom.Error", true],
    [["Custom.Error"], "custom.error", false], // error names are case-sensitive
    [["Other", "Custom.Error"], "Custom.Error", true],
  ])("Catch %j on error %s → caught: %s", async (errorEquals, error, caught) => {
    const r = await execute(machine(errorEquals), { mocks: { T: [{ Throw: { Error: error } }] } });
    if (caught) expect(r.output).toBe("caught");
    else expect(r).toMatchObject({ status: "FAILED", error });
  });

  it("a Retry on States.TaskFailed does not retry States.Timeout", async () => {
    const r = await execute(
      single(task({ Retry: [{ ErrorEquals: ["States.TaskFailed"], IntervalSeconds: 1 }] })),
      { mocks: { S: [{ Throw: { Error: "States.Timeout" } }, { Return: "retried" }] } },
    );
    expect(r).toMatchObject({ status: "FAILED", error: "States.Timeout" });
    expect(ofType(r.history, "TaskScheduled")).toHaveLength(1);
  });

  it("States.ALL neither retries nor catches States.Runtime", async () => {
    const r = await execute(
      {
        StartAt: "T",
        States: {
          T: task({
            End: undefined,
            Next: "Ok",
            Parameters: { "x.$": "$.missing" },
            Retry: [{ ErrorEquals: ["States.ALL"], IntervalSeconds: 1 }],
            Catch: [{ ErrorEquals: ["States.ALL"], Next: "Caught" }],
          }),
          Ok: { Type: "Pass", End: true },
          Caught: { Type: "Pass", End: true },
        },
      },
      { tasks: { work: () => "never called" } },
    );
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("States.Runtime");
    expect(ofType(r.history, "TaskScheduled")).toHaveLength(0);
    expect(ofType(r.history, "PassStateEntered")).toHaveLength(0);
  });

  // CDK RetryProps: "maxAttempts … May be 0 to disable retry for specific errors".
  it("a retrier with MaxAttempts 0 never retries; the catcher then applies", async () => {
    const r = await execute(
      {
        StartAt: "T",
        States: {
          T: task({
            End: undefined,
            Next: "Ok",
            Retry: [
              { ErrorEquals: ["Fatal"], MaxAttempts: 0 },
              { ErrorEquals: ["States.ALL"], MaxAttempts: 5 },
            ],
            Catch: [{ ErrorEquals: ["Fatal"], Next: "Caught" }],
          }),
          Ok: { Type: "Pass", End: true },
          Caught: { Type: "Pass", Result: "caught", End: true },
        },
      },
      { mocks: { T: [{ Throw: { Error: "Fatal" } }, { Return: "retried" }] } },
    );
    expect(r.output).toBe("caught");
    expect(ofType(r.history, "TaskScheduled")).toHaveLength(1);
  });
});

describe("Task state: TimeoutSeconds", () => {
  it("a timeout timer firing fails the attempt with States.Timeout (TaskTimedOut)", () => {
    const s = new Stepper(single(task({ TimeoutSeconds: 5 })));
    const started = s.start();
    const run = only(effectsOf(started, "RunTask"));
    expect(run.timeoutSeconds).toBe(5);
    const timer = only(effectsOf(started, "ArmTimer"));
    expect(timer).toMatchObject({
      purpose: "taskTimeout",
      at: Date.parse("2024-01-01T00:00:05.000Z"),
    });
    s.now = timer.at;
    const effects = s.send(s.rootId, { type: "TimerFired", timerId: timer.timerId });
    expect(effectsOf(effects, "CancelTask")).toEqual([
      { type: "CancelTask", runId: s.rootId, taskId: run.taskId },
    ]);
    const timedOut = only(ofType(s.history, "TaskTimedOut"));
    expect(details(timedOut).error).toBe("States.Timeout");
    expect(s.run()).toMatchObject({ status: "FAILED", error: "States.Timeout" });
    // A result arriving after the timeout changes nothing.
    const late = s.deliver(s.rootId, { type: "TaskSucceeded", taskId: run.taskId, output: 1 });
    expect(late.history).toEqual([]);
  });

  it("TimeoutSecondsPath reads the timeout from the input", () => {
    const s = new Stepper(single(task({ TimeoutSecondsPath: "$.t" })), { t: 9 });
    const timer = only(effectsOf(s.start(), "ArmTimer"));
    expect(timer.at - s.now).toBe(9000);
  });

  it("a retried timeout schedules a fresh attempt with a fresh timer", () => {
    const s = new Stepper(
      single(
        task({
          TimeoutSeconds: 5,
          Retry: [{ ErrorEquals: ["States.Timeout"], IntervalSeconds: 2 }],
        }),
      ),
    );
    const first = only(effectsOf(s.start(), "ArmTimer"));
    s.now = first.at;
    const backoff = only(
      effectsOf(s.send(s.rootId, { type: "TimerFired", timerId: first.timerId }), "ArmTimer"),
    );
    expect(backoff.purpose).toBe("retry");
    expect(backoff.at - s.now).toBe(2000);
    s.now = backoff.at;
    const again = s.send(s.rootId, { type: "TimerFired", timerId: backoff.timerId });
    const second = only(effectsOf(again, "ArmTimer"));
    expect(second.purpose).toBe("taskTimeout");
    expect(second.timerId).not.toBe(first.timerId);
    expect(second.at - s.now).toBe(5000);
    expect(only(effectsOf(again, "RunTask")).attempt).toBe(1);
  });

  // The in-memory driver on the virtual clock must let the timeout fire while a
  // handler is still pending: "waits cost no real time" (engine/drivers/memory.ts).
  it("fires States.Timeout for a handler that never resolves on the virtual clock", async () => {
    const result = execute(single(task({ TimeoutSeconds: 5 })), {
      tasks: { work: () => new Promise<Json>(() => {}) },
    });
    const r = await within(result, 500, "execution with a hung task");
    expect(r).toMatchObject({ status: "FAILED", error: "States.Timeout" });
    const timedOut = only(ofType(r.history, "TaskTimedOut"));
    expect(at(timedOut)).toBe(5000);
  });
});

describe("Task state: HeartbeatSeconds", () => {
  it("arms a heartbeat timer that each heartbeat pushes back", () => {
    const s = new Stepper(single(task({ HeartbeatSeconds: 10, TimeoutSeconds: 100 })));
    const started = s.start();
    const run = only(effectsOf(started, "RunTask"));
    expect(run.heartbeatSeconds).toBe(10);
    const hb = only(effectsOf(started, "ArmTimer").filter((t) => t.purpose === "heartbeat"));
    expect(hb.at - s.now).toBe(10_000);

    s.now += 7000;
    const beat = s.send(s.rootId, { type: "TaskHeartbeat", taskId: run.taskId });
    expect(effectsOf(beat, "CancelTimer")).toEqual([
      { type: "CancelTimer", runId: s.rootId, timerId: hb.timerId },
    ]);
    const hb2 = only(effectsOf(beat, "ArmTimer"));
    expect(hb2).toMatchObject({ purpose: "heartbeat", at: s.now + 10_000 });
    expect(beat.filter((e) => e.type !== "CancelTimer" && e.type !== "ArmTimer")).toEqual([]);

    // The superseded heartbeat timer firing changes nothing.
    s.now = hb.at;
    const stale = s.deliver(s.rootId, { type: "TimerFired", timerId: hb.timerId });
    expect(stale.history).toEqual([]);
    expect(s.run().status).toBe("RUNNING");

    // A heartbeat for another task id is ignored.
    const wrong = s.deliver(s.rootId, { type: "TaskHeartbeat", taskId: "other" });
    expect(wrong.effects).toEqual([]);

    s.now = hb2.at;
    s.send(s.rootId, { type: "TimerFired", timerId: hb2.timerId });
    expect(s.run().status).toBe("FAILED");
    expect(ofType(s.history, "TaskTimedOut")).toHaveLength(1);
  });

  // AWS's recorded executions (conformance task-cases
  // "localstack:test_heartbeats::test_heartbeat_no_timeout": HeartbeatSeconds 5, no
  // heartbeat sent) fail with error "States.Timeout", not "States.HeartbeatTimeout".
  it("a missed heartbeat fails the execution with States.Timeout, as AWS records it", () => {
    const s = new Stepper(single(task({ HeartbeatSeconds: 5 })));
    const hb = only(effectsOf(s.start(), "ArmTimer"));
    s.now = hb.at;
    s.send(s.rootId, { type: "TimerFired", timerId: hb.timerId });
    expect(s.run()).toMatchObject({ status: "FAILED", error: "States.Timeout" });
  });

  it("a heartbeat timeout is retried like any other task error", () => {
    const s = new Stepper(
      single(
        task({ HeartbeatSeconds: 5, Retry: [{ ErrorEquals: ["States.ALL"], IntervalSeconds: 1 }] }),
      ),
    );
    const hb = only(effectsOf(s.start(), "ArmTimer"));
    s.now = hb.at;
    const backoff = only(
      effectsOf(s.send(s.rootId, { type: "TimerFired", timerId: hb.timerId }), "ArmTimer"),
    );
    expect(backoff.purpose).toBe("retry");
    s.now = backoff.at;
    const retry = s.send(s.rootId, { type: "TimerFired", timerId: backoff.timerId });
    expect(effectsOf(retry, "RunTask")).toHaveLength(1);
  });
});
