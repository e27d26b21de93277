/**
 * The Pass-state cases of test/conformance/data/cases.jsonl, recorded against AWS
 * Step Functions, replayed through the JSONPath, intrinsic-function and
 * payload-template modules alone. Only definitions made of JSONPath Pass
 * states are taken (the intrinsic-function matrix, the JSONPath and variable
 * scenarios): a tiny local Pass evaluator (InputPath → Parameters/Result →
 * Assign → ResultPath → OutputPath) is all they need, so the real interpreter
 * is not involved.
 */
import { describe, expect, it } from "vitest";
import { readConformanceFile } from "../conformance/load.js";
import type { PassState, StateMachineDefinition } from "../../engine/core/definition.js";
import { isStatesError, StatesError } from "../../engine/core/errors.js";
import { jsonEqual, type Json, type JsonObject } from "../../engine/core/json.js";
import { seededRandom } from "../../engine/core/random.js";
import { evaluatePayloadTemplate } from "../../engine/io/payload-template.js";
import {
  invalidPathCause,
  readPath,
  writeReferencePath,
  type PathScope,
} from "../../engine/jsonpath/index.js";

type Outcome =
  | { status: "SUCCEEDED"; output: Json }
  | { status: "FAILED"; error: string | null; cause?: string };

interface Case {
  id: string;
  definition: StateMachineDefinition;
  input: Json;
  expect: Outcome | { status: "SUCCEEDED" };
  nondeterministic?: boolean;
}

/** Cases that need more than this file's Pass evaluator, with the reason. */
const OUT_OF_SCOPE: Readonly<Record<string, string>> = {
  "localstack:test_states_errors::test_start_large_input":
    "the 256 KiB payload limit (States.DataLimitExceeded) belongs to the interpreter",
};

/** A definition of JSONPath Pass states only, without JSONata anywhere. */
function isPassChain(definition: StateMachineDefinition): boolean {
  if (definition.QueryLanguage === "JSONata") return false;
  if (JSON.stringify(definition).includes("{%")) return false;
  return Object.values(definition.States).every(
    (s) => s.Type === "Pass" && s.QueryLanguage !== "JSONata",
  );
}

function loadCases(): Case[] {
  return readConformanceFile("cases.jsonl")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Case)
    .filter((c) => isPassChain(c.definition) && !(c.id in OUT_OF_SCOPE));
}

function contextObject(input: Json, stateName: string): JsonObject {
  return {
    Execution: {
      Id: "arn:aws:states:us-east-1:000000000000:execution:machine:execution",
      Input: input,
      Name: "execution",
      RoleArn: "arn:aws:iam::000000000000:role/role",
      StartTime: "2024-01-01T00:00:00.000Z",
    },
    State: { Name: stateName, EnteredTime: "2024-01-01T00:00:00.000Z", RetryCount: 0 },
    StateMachine: {
      Id: "arn:aws:states:us-east-1:000000000000:stateMachine:machine",
      Name: "machine",
    },
  };
}

function select(path: string | null | undefined, scope: PathScope): Json {
  if (path === undefined) return scope.input;
  if (path === null) return {};
  const found = readPath(path, scope);
  if (!found.found) throw new StatesError("States.Runtime", invalidPathCause(path, scope));
  return found.value;
}

/** ASL "Input and Output Processing" for a Pass state, JSONPath flavour. */
function runPassChain(definition: StateMachineDefinition, input: Json): Outcome {
  const random = seededRandom("conformance");
  let variables: Record<string, Json> = {};
  let current: string | undefined = definition.StartAt;
  let raw = input;
  try {
    while (current !== undefined) {
      const state = definition.States[current] as PassState;
      const context = contextObject(input, current);
      const scopeOf = (doc: Json): PathScope => ({ input: doc, context, variables });
      const effective = select(state.InputPath, scopeOf(raw));
      const parameters =
        state.Parameters === undefined
          ? effective
          : evaluatePayloadTemplate(state.Parameters, scopeOf(effective), random, "Parameters");
      const result = state.Result !== undefined ? state.Result : parameters;
      // Assign reads the state's result and the variables as they were before the state.
      const assigned =
        state.Assign === undefined
          ? {}
          : (evaluatePayloadTemplate(
              state.Assign,
              scopeOf(result),
              random,
              "Assign",
            ) as JsonObject);
      const merged =
        state.ResultPath === undefined
          ? result
          : state.ResultPath === null
            ? raw
            : writeReferencePath(raw, state.ResultPath, result);
      raw = select(state.OutputPath, scopeOf(merged));
      variables = { ...variables, ...assigned };
      current = state.End === true ? undefined : state.Next;
    }
    return { status: "SUCCEEDED", output: raw };
  } catch (error) {
    if (isStatesError(error)) return { status: "FAILED", error: error.error, cause: error.cause };
    throw error;
  }
}

const cases = loadCases();

describe("conformance: Pass states with JSONPath, intrinsic functions and payload templates", () => {
  it("finds the recorded cases", () => {
    expect(cases.length).toBeGreaterThan(90);
  });

  it.each(cases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
    const outcome = runPassChain(c.definition, c.input);
    expect(outcome.status).toBe(c.expect.status);
    if (c.nondeterministic === true) return;
    if (c.expect.status === "SUCCEEDED" && "output" in c.expect) {
      const output = outcome.status === "SUCCEEDED" ? outcome.output : undefined;
      expect(jsonEqual(output ?? null, c.expect.output), JSON.stringify(output)).toBe(true);
    }
    if (c.expect.status === "FAILED" && outcome.status === "FAILED") {
      expect(outcome.error).toBe(c.expect.error);
      // AWS prefixes causes with the state and event id; the interpreter adds that part.
      if (c.expect.cause !== undefined)
        expect(c.expect.cause.endsWith(outcome.cause ?? "")).toBe(true);
    }
  });
});
