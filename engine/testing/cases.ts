import type { StateMachineDefinition } from "../core/definition.js";
import { jsonEqual, type Json } from "../core/json.js";
import { runExecution, type ExecutionResult, type MockResponse } from "../drivers/memory.js";
import { diffJson, type JsonDifference } from "./diff.js";

/**
 * Test cases in the format of the conformance suite (one JSON object per line):
 * a definition, an input, the expected outcome, optional mocks for Task states.
 * This is what `stepwise test` runs, so users can unit-test their state machines.
 */
export interface TestCase {
  id: string;
  definition: StateMachineDefinition;
  input?: Json;
  expect: Expectation;
  features?: string[];
  nondeterministic?: boolean;
  mocks?: Record<string, MockResponse[]>;
  max_wait_seconds?: number;
  /** Optional execution context: names that `$$` exposes. */
  context?: { executionName?: string; stateMachineName?: string };
}

/**
 * What a case expects: the status, and only what else it names. An absent `output`
 * or `error` is not checked; `"error": null` means "no error name".
 */
export type Expectation =
  | { status: "SUCCEEDED"; output?: Json }
  | { status: "FAILED" | "TIMED_OUT" | "ABORTED"; error?: string | null; cause?: string };

export interface Actual {
  status: string;
  output?: Json;
  error?: string;
  cause?: string;
}

export interface CaseResult {
  id: string;
  passed: boolean;
  /** The cause matched too (the stricter level). */
  causeMatched: boolean;
  /** Why it failed, one line. */
  difference?: string;
  /** Where the output departs from the expected output, when that is why. */
  outputDifferences?: JsonDifference[];
  actual: Actual;
  features: string[];
  execution?: ExecutionResult;
}

export interface CaseOptions {
  clock?: "virtual" | "real";
  timeScale?: number;
  /** Keep the full execution (history, journal) on each result. */
  keepExecution?: boolean;
}

function show(value: Json | undefined): string {
  const text = JSON.stringify(value);
  return text === undefined ? "undefined" : text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

export async function runCase(tc: TestCase, options: CaseOptions = {}): Promise<CaseResult> {
  const features = tc.features ?? [];
  let execution: ExecutionResult;
  try {
    execution = await runExecution(tc.definition, {
      input: tc.input ?? {},
      clock: options.clock ?? "virtual",
      timeScale: options.timeScale ?? 1,
      ...(tc.mocks ? { mocks: tc.mocks } : {}),
      ...(tc.context?.executionName ? { executionName: tc.context.executionName } : {}),
      ...(tc.context?.stateMachineName ? { stateMachineName: tc.context.stateMachineName } : {}),
      maxTransitions: 1_000_000,
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      id: tc.id,
      passed: false,
      causeMatched: false,
      difference: `engine error: ${message}`,
      actual: { status: "ERROR", cause: message },
      features,
    };
  }
  const actual: Actual = { status: execution.status };
  if (execution.status === "SUCCEEDED") actual.output = execution.output ?? null;
  else {
    if (execution.error !== undefined) actual.error = execution.error;
    if (execution.cause !== undefined) actual.cause = execution.cause;
  }
  const outputDifferences =
    tc.expect.status === "SUCCEEDED" &&
    actual.status === "SUCCEEDED" &&
    tc.expect.output !== undefined &&
    !tc.nondeterministic
      ? diffJson(tc.expect.output, actual.output ?? null)
      : [];
  const difference = compare(tc, actual);
  const expectedCause = tc.expect.status !== "SUCCEEDED" ? tc.expect.cause : undefined;
  const result: CaseResult = {
    id: tc.id,
    passed: difference === undefined,
    causeMatched:
      difference === undefined && (expectedCause === undefined || expectedCause === actual.cause),
    actual,
    features,
  };
  if (difference !== undefined) result.difference = difference;
  if (outputDifferences.length > 0) result.outputDifferences = outputDifferences;
  if (options.keepExecution) result.execution = execution;
  return result;
}

function compare(tc: TestCase, actual: Actual): string | undefined {
  const expect = tc.expect;
  if (expect.status !== actual.status) {
    const detail =
      actual.status === "SUCCEEDED"
        ? show(actual.output)
        : `${actual.error ?? "-"}: ${actual.cause ?? ""}`;
    return `status ${actual.status} (${detail.slice(0, 300)}), expected ${expect.status}`;
  }
  if (tc.nondeterministic) return undefined;
  if (expect.status === "SUCCEEDED") {
    if (expect.output !== undefined && !jsonEqual(actual.output ?? null, expect.output)) {
      return `output ${show(actual.output)}, expected ${show(expect.output)}`;
    }
    return undefined;
  }
  if (expect.error === undefined) return undefined;
  const expectedError = expect.error ?? undefined;
  if (expectedError !== actual.error) {
    return `error ${actual.error ?? "(none)"} (${(actual.cause ?? "").slice(0, 200)}), expected ${expectedError ?? "(none)"}`;
  }
  return undefined;
}

/** Runs cases `concurrency` at a time, reporting each as it finishes. */
export async function runCases(
  cases: TestCase[],
  options: CaseOptions & { concurrency?: number; onResult?: (r: CaseResult) => void } = {},
): Promise<CaseResult[]> {
  const results = new Array<CaseResult>(cases.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < cases.length) {
      const i = next++;
      const r = await runCase(cases[i]!, options);
      results[i] = r;
      options.onResult?.(r);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 8) }, worker));
  return results;
}

export function parseCases(text: string): TestCase[] {
  return text
    .split("\n")
    .map((line, i) => ({ line: line.trim(), n: i + 1 }))
    .filter(({ line }) => line.length > 0)
    .map(({ line, n }) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch (err) {
        throw new Error(`line ${n}: not JSON (${(err as Error).message})`);
      }
      if (
        typeof parsed !== "object" ||
        parsed === null ||
        !("definition" in parsed) ||
        !("expect" in parsed)
      ) {
        throw new Error(`line ${n}: a case needs "definition" and "expect"`);
      }
      const tc = parsed as TestCase;
      if (typeof tc.id !== "string") tc.id = `line ${n}`;
      return tc;
    });
}
