import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { ExecutionContext, Frame, RunState } from "../../engine/core/run.js";
import { spanIds } from "../../runtime/tracing/span-ids.js";
import { spansOfAttempt, spansOfCommit } from "../../runtime/tracing/spans.js";
import type { AttemptTrace } from "../../task-runners/runner.js";

/** Spans from committed facts: pure, so each case is a commit written out by hand. */
const T = "4bf92f3577b34da6a3ce929d0e0e4736";
const ARN = "arn:aws:states:us-east-1:123456789012:execution:m:e";
const context: ExecutionContext = {
  executionId: ARN,
  name: "e",
  startTime: "2026-01-01T00:00:00.000Z",
  input: {},
  stateMachineId: "arn:aws:states:us-east-1:123456789012:stateMachine:m",
  stateMachineName: "m",
  seed: "e",
};
const at = (s: number) => new Date(Date.parse(context.startTime) + s * 1000).toISOString();
const event = (id: number, type: string, s: number, details?: object): HistoryEvent =>
  ({
    id,
    previousEventId: id - 1,
    timestamp: at(s),
    type,
    ...(details ? { [detailsKeyOf(type)]: details } : {}),
  }) as HistoryEvent;
const detailsKeyOf = (type: string) =>
  type.endsWith("StateEntered")
    ? "stateEnteredEventDetails"
    : `${type[0]!.toLowerCase()}${type.slice(1)}EventDetails`;
const run = (runId: string, current?: Partial<Frame>, extra: Partial<RunState> = {}): RunState =>
  ({
    runId,
    scope: "",
    status: "RUNNING",
    variables: {},
    random: 0,
    lastEventId: 0,
    serial: 0,
    ...(current
      ? {
          current: {
            name: "?",
            input: {},
            enteredTime: at(0),
            enteredEventId: 0,
            phase: { kind: "entering" },
            ...current,
          },
        }
      : {}),
    ...extra,
  }) as RunState;
const base = { trace: { traceId: T }, context, stateType: () => "Task" };

describe("spansOfCommit", () => {
  it("closes a state entered earlier at its exit, under the execution's span", () => {
    const spans = spansOfCommit({
      ...base,
      before: run(ARN, { name: "A", enteredEventId: 2, enteredTime: at(1) }),
      after: run(ARN, { name: "B", enteredEventId: 6 }),
      history: [event(5, "TaskStateExited", 3), event(6, "PassStateEntered", 3, { name: "B" })],
    });
    expect(spans).toEqual([
      expect.objectContaining({
        name: "state A",
        spanId: spanIds.state(T, ARN, 2),
        parentSpanId: spanIds.execution(T),
        startMs: Date.parse(at(1)),
        endMs: Date.parse(at(3)),
      }),
    ]);
    expect(spans[0]!.attributes["stepwise.state.type"]).toBe("Task");
    expect(spans[0]!.error).toBeUndefined();
  });

  it("closes a state entered and exited in the same commit, and the execution at its end", () => {
    const spans = spansOfCommit({
      ...base,
      trace: { traceId: T, parentSpanId: "00f067aa0ba902b7" },
      before: run(ARN),
      after: run(ARN, undefined, { status: "SUCCEEDED" }),
      history: [
        event(2, "PassStateEntered", 4, { name: "P" }),
        event(3, "PassStateExited", 4, { name: "P" }),
        event(4, "ExecutionSucceeded", 4, { output: "{}" }),
      ],
    });
    expect(spans.map((s) => [s.name, s.parentSpanId])).toEqual([
      ["state P", spanIds.execution(T)],
      ["workflow m", "00f067aa0ba902b7"],
    ]);
    expect(spans[1]).toMatchObject({
      spanId: spanIds.execution(T),
      startMs: Date.parse(at(0)),
      endMs: Date.parse(at(4)),
      attributes: { "workflow.execution.result": "success" },
    });
  });

  it("ends in error a state left without an exit (an uncaught failure), and the execution", () => {
    const spans = spansOfCommit({
      ...base,
      before: run(ARN, {
        name: "Call",
        enteredEventId: 2,
        phase: { kind: "task", taskId: `${ARN}#1`, timerIds: [] },
      }),
      after: run(ARN, undefined, { status: "FAILED", error: "Boom" }),
      history: [
        event(5, "TaskFailed", 2, { error: "Boom", cause: "it broke" }),
        event(6, "ExecutionFailed", 2, { error: "Boom", cause: "it broke" }),
      ],
    });
    expect(spans.map((s) => [s.name, s.error])).toEqual([
      ["workflow m", { type: "Boom", message: "it broke" }],
      ["state Call", { type: "Boom", message: "it broke" }],
    ]);
    expect(spans[0]!.attributes["workflow.execution.result"]).toBe("failure");
  });

  it("names a Map state by its join, and puts its iterations' states under it", () => {
    const prefix = `${ARN}/3`;
    const map = spansOfCommit({
      ...base,
      before: run(ARN, {
        name: "Fan",
        enteredEventId: 7,
        phase: { kind: "collecting", prefix, total: 2 },
      }),
      after: run(ARN, { name: "Next", enteredEventId: 21 }),
      history: [event(20, "MapStateExited", 9), event(21, "PassStateEntered", 9, { name: "Next" })],
    });
    expect(map[0]).toMatchObject({ name: "state Fan", spanId: spanIds.join(T, prefix) });
    const item = spansOfCommit({
      ...base,
      before: run(`${prefix}/1`, undefined, { iteration: 1, parent: { runId: ARN, index: 1 } }),
      after: run(`${prefix}/1`, undefined, { status: "SUCCEEDED" }),
      history: [
        event(12, "PassStateEntered", 8, { name: "Item" }),
        event(13, "PassStateExited", 8, { name: "Item" }),
      ],
    });
    expect(item[0]).toMatchObject({
      name: "state Item",
      parentSpanId: spanIds.join(T, prefix),
      spanId: spanIds.state(T, `${prefix}/1`, 12),
      attributes: { "stepwise.map.iteration": 1 },
    });
  });

  it("builds nothing for a commit that leaves its state open", () => {
    expect(
      spansOfCommit({
        ...base,
        before: run(ARN, { name: "Call", enteredEventId: 2 }),
        after: run(ARN, { name: "Call", enteredEventId: 2 }),
        history: [event(4, "TaskFailed", 1, { error: "Retry.Me" })],
      }),
    ).toEqual([]);
  });
});

describe("spansOfAttempt", () => {
  const trace: AttemptTrace = {
    traceId: T,
    spanId: spanIds.attempt(T, `${ARN}#4`),
    parentSpanId: spanIds.state(T, ARN, 2),
    traceparent: `00-${T}-${spanIds.http(T, `${ARN}#4`)}-01`,
  };
  const attempt = {
    trace,
    executionId: ARN,
    stateMachineName: "m",
    stateName: "Call",
    resource: "arn:aws:states:::http:invoke",
    taskId: `${ARN}#4`,
    attempt: 1,
    input: { ApiEndpoint: "https://api.example.com:8443/charges?secret=1", Method: "post" },
    startMs: 1000,
    endMs: 1250,
  };

  it("is the attempt's span and its request's client span, which traceparent named", () => {
    const [span, request] = spansOfAttempt({ ...attempt, output: { StatusCode: 201 } });
    expect(span).toMatchObject({
      name: "attempt Call",
      spanId: trace.spanId,
      parentSpanId: trace.parentSpanId,
      attributes: { "workflow.execution.attempt": 2, "workflow.task.run.result": "success" },
    });
    expect(request).toMatchObject({
      name: "POST",
      kind: "client",
      spanId: spanIds.http(T, `${ARN}#4`),
      parentSpanId: trace.spanId,
      attributes: {
        "http.request.method": "POST",
        "url.full": "https://api.example.com:8443/charges",
        "server.address": "api.example.com",
        "server.port": 8443,
        "http.response.status_code": 201,
      },
    });
  });

  it("records a failed request's status code as its error.type", () => {
    const [span, request] = spansOfAttempt({
      ...attempt,
      error: { type: "States.Http.StatusCode.503", message: "{}" },
    });
    expect(span!.error?.type).toBe("States.Http.StatusCode.503");
    expect(request!.error?.type).toBe("503");
    expect(request!.attributes["http.response.status_code"]).toBe(503);
  });

  it("has no client span for other resources", () => {
    expect(spansOfAttempt({ ...attempt, resource: "function:f", output: null })).toHaveLength(1);
  });
});
