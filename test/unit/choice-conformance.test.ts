/**
 * The Choice cases of test/conformance/data/cases.jsonl, recorded against AWS Step
 * Functions, replayed through `selectChoice`. Only definitions that are one JSONPath
 * Choice state leading straight to terminal Pass or Fail states are taken (the
 * localstack operator matrix and a few scenarios): for those the Choice decides the
 * whole outcome, so no other part of the engine is needed to check it.
 */
import { describe, expect, it } from "vitest";
import { readConformanceFile } from "../conformance/load.js";
import { selectChoice, type Resolution } from "../../engine/choice/evaluate.js";
import type { ChoiceState, State, StateMachineDefinition } from "../../engine/core/definition.js";
import { isStatesError } from "../../engine/core/errors.js";
import { isJsonObject, jsonEqual, type Json } from "../../engine/core/json.js";

type Expect =
  | { status: "SUCCEEDED"; output: Json }
  | { status: "FAILED"; error: string | null; cause?: string };

interface Case {
  id: string;
  definition: StateMachineDefinition;
  input: Json;
  expect: Expect;
  nondeterministic?: boolean;
}

type Outcome =
  | { status: "SUCCEEDED"; output: Json }
  | { status: "FAILED"; error: string | null; cause?: string };

/** A Pass state whose output is its `Result` (or its input), with no other data processing. */
function isPlainTerminalPass(state: State): boolean {
  if (state.Type !== "Pass" || state.End !== true) return false;
  const extra = ["Parameters", "InputPath", "OutputPath", "ResultPath", "Assign", "Output"];
  return extra.every((field) => !(field in state));
}

function isTerminal(state: State | undefined): boolean {
  if (state === undefined) return false;
  if (state.Type === "Fail") return state.ErrorPath === undefined && state.CausePath === undefined;
  return isPlainTerminalPass(state);
}

/** The start Choice state of a case this test can replay on its own, else undefined. */
function replayableChoice(definition: StateMachineDefinition): ChoiceState | undefined {
  const start = definition.States[definition.StartAt];
  if (start === undefined || start.Type !== "Choice") return undefined;
  const language = start.QueryLanguage ?? definition.QueryLanguage ?? "JSONPath";
  if (language !== "JSONPath" || start.Assign !== undefined || start.InputPath !== undefined) {
    return undefined;
  }
  if (start.Choices.some((rule) => rule.Condition !== undefined || rule["Assign"] !== undefined)) {
    return undefined;
  }
  const targets = [...start.Choices.map((rule) => rule.Next), start.Default];
  const ok = targets.every((name) => name === undefined || isTerminal(definition.States[name]));
  return ok ? start : undefined;
}

/** A reader for the reference paths these definitions use: `$`, `.name`, `['name']`, `[n]`. */
function resolver(input: Json): (path: string) => Resolution {
  return (path) => {
    if (!path.startsWith("$") || path.startsWith("$$")) return { found: false };
    const step = /^(?:\.([^.[\]]+)|\['([^']*)'\]|\[(\d+)\])/;
    let rest = path.slice(1);
    let value: Json = input;
    while (rest.length > 0) {
      const m = step.exec(rest);
      if (m === null) return { found: false };
      const [token, dotted, quoted, index] = m;
      rest = rest.slice(token.length);
      if (index !== undefined) {
        if (!Array.isArray(value) || Number(index) >= value.length) return { found: false };
        value = value[Number(index)]!;
      } else {
        const key = (dotted ?? quoted)!;
        if (!isJsonObject(value) || !Object.hasOwn(value, key)) return { found: false };
        value = value[key]!;
      }
    }
    return { found: true, value };
  };
}

function run(definition: StateMachineDefinition, choice: ChoiceState, input: Json): Outcome {
  let next: string | undefined;
  try {
    next = selectChoice(choice.Choices, resolver(input))?.Next ?? choice.Default;
  } catch (err) {
    if (isStatesError(err)) return { status: "FAILED", error: err.error, cause: err.cause };
    throw err;
  }
  if (next === undefined) {
    return { status: "FAILED", error: "States.NoChoiceMatched" };
  }
  const state = definition.States[next]!;
  if (state.Type === "Fail") {
    const failed: Outcome = { status: "FAILED", error: state.Error ?? null };
    return state.Cause === undefined ? failed : { ...failed, cause: state.Cause };
  }
  if (state.Type !== "Pass") throw new Error(`unexpected target ${next}`);
  return { status: "SUCCEEDED", output: state.Result !== undefined ? state.Result : input };
}

/** Why `actual` differs from `expected` under the conformance README's rules, or undefined. */
function mismatch(c: Case, actual: Outcome): string | undefined {
  const expected = c.expect;
  if (actual.status !== expected.status) {
    return `status ${actual.status} (${JSON.stringify(actual)}), expected ${expected.status}`;
  }
  if (c.nondeterministic === true) return undefined;
  if (expected.status === "SUCCEEDED" && actual.status === "SUCCEEDED") {
    return jsonEqual(actual.output, expected.output)
      ? undefined
      : `output ${JSON.stringify(actual.output)}, expected ${JSON.stringify(expected.output)}`;
  }
  if (expected.status === "FAILED" && actual.status === "FAILED") {
    return actual.error === expected.error
      ? undefined
      : `error ${actual.error}, expected ${expected.error}`;
  }
  return undefined;
}

const allCases: Case[] = readConformanceFile("cases.jsonl")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as Case);

const replayable = allCases.flatMap((c) => {
  const choice = replayableChoice(c.definition);
  return choice === undefined ? [] : [{ c, choice }];
});

describe.skipIf(allCases.length === 0)("Choice conformance (recorded against AWS)", () => {
  it("finds the operator matrix and the Choice scenarios", () => {
    // 272 matrix cases + the AWS docs scenario + the two unsorted-parameter cases.
    expect(replayable.length).toBeGreaterThanOrEqual(275);
  });

  it("matches AWS on every replayable case", () => {
    const failures = replayable.flatMap(({ c, choice }) => {
      const why = mismatch(c, run(c.definition, choice, c.input));
      return why === undefined ? [] : [`${c.id}: ${why}`];
    });
    const passed = replayable.length - failures.length;
    console.info(`Choice conformance: ${passed} of ${replayable.length} cases pass`);
    expect(failures).toEqual([]);
  });
});
