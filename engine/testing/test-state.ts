import type { State, StateMachineDefinition } from "../core/definition.js";
import type { RunEvent } from "../core/events.js";
import type { Json, JsonObject } from "../core/json.js";
import type { ExecutionContext } from "../core/run.js";
import { runExecution, type MockResponse } from "../drivers/memory.js";
import type { TaskHandlers } from "../drivers/tasks.js";
import { applyInputPath, applyResultPath, applyTemplate } from "../io/jsonpath-io.js";
import { compileProgram, queryLanguageOf } from "../program.js";
import { waitsForToken } from "../states/task.js";
import { newRun } from "../step.js";
import { StepContext } from "../step-context.js";

/**
 * AWS's TestState: one state run once with an input, its Task result mocked, on the
 * same pure `step` as every execution. The state runs inside a machine of its own
 * whose every transition target is a Succeed placeholder, so the run stops right
 * after it and the placeholder it entered names the next state.
 *
 * DEBUG inspection data replays the JSONPath pipeline (InputPath → Parameters →
 * result → ResultSelector → ResultPath) on the state's input with the engine's own
 * functions; the status and output come from the run itself.
 */

export type InspectionLevel = "INFO" | "DEBUG" | "TRACE";

export interface TestStateRequest {
  /** One state, or a whole machine (then `stateName`, default StartAt, picks the state). */
  definition: JsonObject;
  stateName?: string;
  input: Json;
  inspectionLevel?: InspectionLevel;
  /** The Task's result, or its error. */
  mock?: { result: Json } | { error: string; cause?: string };
  /**
   * What a Task without a mock calls: the service's runners (api/test-state.ts), so
   * TestState calls the resource as AWS calls the real service. Without it, a Task
   * needs a mock.
   */
  tasks?: TaskHandlers;
  /** Fixed clock and entropy: the run is deterministic given these. */
  now: string;
  seed: string;
}

export interface InspectionData {
  input: Json;
  afterInputPath?: Json;
  afterParameters?: Json;
  result?: Json;
  afterResultSelector?: Json;
  afterResultPath?: Json;
}

export interface TestStateResult {
  status: "SUCCEEDED" | "FAILED" | "CAUGHT_ERROR" | "RETRIABLE";
  output?: Json;
  error?: string;
  cause?: string;
  nextState?: string;
  inspectionData?: InspectionData;
}

/** Thrown for a request that cannot be tested (the API answers it as a validation error). */
export class TestStateError extends Error {}

const PLACEHOLDER = "\u0000next:";

/** The state to test and its name. */
function pick(request: TestStateRequest): { name: string; state: State } {
  const def = request.definition;
  if (typeof def.States === "object" && def.States !== null && !Array.isArray(def.States)) {
    const states = def.States as unknown as Record<string, State>;
    const name = request.stateName ?? (typeof def.StartAt === "string" ? def.StartAt : "");
    const state = states[name];
    if (!state) throw new TestStateError(`The definition has no state '${name}'`);
    return { name, state };
  }
  if (typeof def.Type !== "string") {
    throw new TestStateError("The definition is neither a state (with Type) nor a state machine");
  }
  return { name: request.stateName ?? "TestState", state: def as unknown as State };
}

/** Every state name the state may go to: its Next, Default, Choices' and Catchers' Next. */
function targets(state: State): string[] {
  const s = state as unknown as {
    Next?: string;
    Default?: string;
    Choices?: { Next?: string }[];
    Catch?: { Next?: string }[];
  };
  const out = new Set<string>();
  if (s.Next) out.add(s.Next);
  if (s.Default) out.add(s.Default);
  for (const c of s.Choices ?? []) if (c.Next) out.add(c.Next);
  for (const c of s.Catch ?? []) if (c.Next) out.add(c.Next);
  return [...out];
}

/** A machine of the state alone, its targets Succeed placeholders. */
function isolate(name: string, state: State, outer: JsonObject): StateMachineDefinition {
  const states: Record<string, unknown> = { [name]: state };
  for (const target of targets(state)) {
    if (target !== name) states[target] = { Type: "Succeed", Comment: `${PLACEHOLDER}${target}` };
  }
  const machine: Record<string, unknown> = { StartAt: name, States: states };
  if (outer.QueryLanguage !== undefined) machine.QueryLanguage = outer.QueryLanguage;
  return machine as unknown as StateMachineDefinition;
}

/** Whether a retrier of the state would retry this error (AWS answers RETRIABLE then). */
function retriable(state: State, error: string): boolean {
  const retry = (state as { Retry?: { ErrorEquals: string[]; MaxAttempts?: number }[] }).Retry;
  return (retry ?? []).some(
    (r) =>
      (r.MaxAttempts ?? 3) > 0 &&
      (r.ErrorEquals.includes(error) ||
        (r.ErrorEquals.includes("States.ALL") && error !== "States.Runtime") ||
        (r.ErrorEquals.includes("States.TaskFailed") &&
          !error.startsWith("States.") &&
          error !== "States.Runtime")),
  );
}

/** The one-state machine a request runs (validate it before `testState`). */
export function isolatedDefinition(request: TestStateRequest): StateMachineDefinition {
  const { name, state } = pick(request);
  return isolate(name, state, request.definition);
}

export async function testState(request: TestStateRequest): Promise<TestStateResult> {
  const { name, state } = pick(request);
  if (state.Type === "Map" || state.Type === "Parallel") {
    throw new TestStateError(`TestState runs one state; a ${state.Type} state runs others`);
  }
  if (state.Type === "Task" && !request.mock) {
    // AWS (API reference, TestState): "TestState only supports the following when a
    // mock is specified: Activity tasks, .sync or .waitForTaskToken service integration
    // patterns": what answers later than its call cannot be tested by calling it.
    if (!answersAtOnce(state.Resource)) {
      throw new TestStateError(
        `TestState calls a Task's resource only when it answers at once; '${state.Resource}' waits (an activity, .sync or .waitForTaskToken): give mock.result or mock.errorOutput`,
      );
    }
    if (!request.tasks) {
      throw new TestStateError(
        "A Task state is tested with a mock: give mock.result or mock.errorOutput",
      );
    }
  }
  const definition = isolate(name, state, request.definition);
  const program = compileProgram(definition);
  const mocks: Record<string, MockResponse[]> = {};
  if (request.mock) {
    mocks[name] = [
      "result" in request.mock
        ? { Return: request.mock.result }
        : {
            Throw: {
              Error: request.mock.error,
              ...(request.mock.cause !== undefined ? { Cause: request.mock.cause } : {}),
            },
          },
    ];
  }
  if (request.mock && "error" in request.mock && retriable(state, request.mock.error)) {
    return withInspection(request, name, program, state, {
      status: "RETRIABLE",
      error: request.mock.error,
      ...(request.mock.cause !== undefined ? { cause: request.mock.cause } : {}),
    });
  }
  const run = await runExecution(program, {
    input: request.input,
    startTime: request.now,
    seed: request.seed,
    nonce: () => request.seed,
    mocks,
    ...(request.tasks && !request.mock ? { tasks: request.tasks } : {}),
    maxTransitions: 1000,
  });
  const entered = run.history
    .map((h) => h.stateEnteredEventDetails as { name?: string } | undefined)
    .filter((d) => d?.name !== undefined)
    .map((d) => d!.name!);
  const placeholder = entered.find((n) => n !== name);
  let result: TestStateResult;
  if (run.status === "SUCCEEDED") {
    result = { status: "SUCCEEDED" };
    if (run.output !== undefined) result.output = run.output;
    if (placeholder !== undefined) result.nextState = placeholder;
    // A catcher took the error: AWS reports CAUGHT_ERROR with the error and next state.
    const caught = run.history.find((h) => h.type === "TaskFailed" || h.type === "TaskTimedOut");
    if (caught && placeholder !== undefined) {
      const details = (caught.taskFailedEventDetails ?? caught.taskTimedOutEventDetails) as
        { error?: string; cause?: string } | undefined;
      result.status = "CAUGHT_ERROR";
      if (details?.error !== undefined) result.error = details.error;
      if (details?.cause !== undefined) result.cause = details.cause;
    }
  } else {
    result = { status: "FAILED" };
    if (run.error !== undefined) result.error = run.error;
    if (run.cause !== undefined) result.cause = run.cause;
  }
  return withInspection(request, name, program, state, result, calledResult(run.history));
}

/** A resource TestState can call for real: it answers with its result (no activity, job or token). */
export function answersAtOnce(resource: string): boolean {
  if (waitsForToken(resource) || /\.sync(:2)?$/.test(resource)) return false;
  return !/^(arn:[^:]+:states:[^:]*:[^:]*:)?activity:/.test(resource);
}

/** The result a called resource answered with (TaskSucceeded's output), for DEBUG's `result`. */
function calledResult(history: readonly { type: string }[]): Json | undefined {
  const succeeded = history.find((h) => h.type === "TaskSucceeded") as
    { taskSucceededEventDetails?: { output?: string } } | undefined;
  const output = succeeded?.taskSucceededEventDetails?.output;
  return output === undefined ? undefined : (JSON.parse(output) as Json);
}

/** DEBUG (and TRACE): the JSONPath pipeline's intermediate values. */
function withInspection(
  request: TestStateRequest,
  name: string,
  program: ReturnType<typeof compileProgram>,
  state: State,
  result: TestStateResult,
  called?: Json,
): TestStateResult {
  if ((request.inspectionLevel ?? "INFO") === "INFO") return result;
  const data: InspectionData = { input: request.input };
  result.inspectionData = data;
  if (queryLanguageOf(program, state) !== "JSONPath") return result;
  const execution: ExecutionContext = {
    executionId: "arn:aws:states:local:000000000000:execution:TestState:test",
    name: "test",
    startTime: request.now,
    input: request.input,
    stateMachineId: "arn:aws:states:local:000000000000:stateMachine:TestState",
    stateMachineName: "TestState",
    seed: request.seed,
  };
  const run = newRun(execution.executionId, "");
  run.current = {
    name,
    input: request.input,
    enteredTime: request.now,
    enteredEventId: 2,
    phase: { kind: "entering" },
  };
  const event: RunEvent = { type: "Continue", time: request.now, eventId: 3 };
  const ctx = new StepContext(program, execution, run, event);
  const s = state as {
    InputPath?: string | null;
    Parameters?: Json;
    Result?: Json;
    ResultSelector?: Json;
    ResultPath?: string | null;
  };
  try {
    if (state.Type === "Choice" || state.Type === "Wait" || state.Type === "Succeed") {
      data.afterInputPath = applyInputPath(ctx, s.InputPath, request.input);
      return result;
    }
    if (state.Type !== "Pass" && state.Type !== "Task") return result;
    data.afterInputPath = applyInputPath(ctx, s.InputPath, request.input);
    data.afterParameters = applyTemplate(ctx, s.Parameters, data.afterInputPath, "Parameters");
    let raw: Json | undefined;
    if (state.Type === "Pass") raw = s.Result !== undefined ? s.Result : data.afterParameters;
    else if (request.mock && "result" in request.mock) raw = request.mock.result;
    else raw = called;
    if (raw === undefined) return result;
    data.result = raw;
    data.afterResultSelector =
      state.Type === "Task" ? applyTemplate(ctx, s.ResultSelector, raw, "ResultSelector") : raw;
    data.afterResultPath = applyResultPath(s.ResultPath, request.input, data.afterResultSelector);
  } catch {
    // The run itself reported the failure; the pipeline stops where it failed.
  }
  return result;
}
