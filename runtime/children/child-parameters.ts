import { createHash } from "node:crypto";
import type { Json, JsonObject } from "../../engine/core/json.js";
import { TaskError } from "../../task-runners/runner.js";
import { childPattern, type ChildPattern } from "../../task-runners/resources.js";

export type { ChildPattern };

/** AWS's key in a child's input: the parent's `$$.Execution.Id`. */
export const STARTED_BY = "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID";

/** What a `states:startExecution` task asks for, checked. */
export interface ChildRequest {
  pattern: ChildPattern;
  machine: string;
  version?: number;
  alias?: string;
  input: Json;
  name?: string;
}

const MACHINE_ARN = /^arn:aws[a-z-]*:states:[^:]*:[^:]*:stateMachine:([^:]+)(?::([^:]+))?$/;
const NAME = /^[A-Za-z0-9_-]{1,80}$/;
const VERSION = /^[1-9]\d{0,8}$/;
const ALIAS = /^[A-Za-z0-9_-]{1,80}$/;

function invalid(message: string): TaskError {
  return new TaskError("States.Runtime", `states:startExecution: ${message}`);
}

/** `arn:…:stateMachine:<name>[:<version>|:<alias>]` (or a bare state machine name). */
export function parseMachineArn(arn: unknown): {
  machine: string;
  version?: number;
  alias?: string;
} {
  if (typeof arn !== "string" || arn === "") throw invalid("StateMachineArn must be a string");
  const match = MACHINE_ARN.exec(arn);
  const machine = match ? match[1]! : arn;
  const qualifier = match ? match[2] : undefined;
  if (!NAME.test(machine)) throw invalid(`StateMachineArn '${arn}' names no state machine`);
  if (qualifier === undefined) return { machine };
  if (VERSION.test(qualifier)) return { machine, version: Number(qualifier) };
  if (ALIAS.test(qualifier)) return { machine, alias: qualifier };
  throw invalid(`StateMachineArn '${arn}' has an invalid version or alias`);
}

/**
 * The child's input: an object gets the parent's execution id under
 * `AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID` (as AWS adds it); a string is the
 * input's JSON text, taken as it is; none is `{}` with the id.
 */
export function childInput(input: Json | undefined, parentExecutionId: string): Json {
  if (input === undefined || input === null) return { [STARTED_BY]: parentExecutionId };
  if (typeof input === "string") {
    try {
      return JSON.parse(input) as Json;
    } catch {
      throw new TaskError(
        "StepFunctions.InvalidExecutionInputException",
        "Invalid State Machine Execution Input: Input is not valid JSON",
      );
    }
  }
  if (typeof input === "object" && !Array.isArray(input)) {
    return { ...(input as JsonObject), [STARTED_BY]: parentExecutionId };
  }
  return input;
}

/** The task's Parameters (its effective input) → what to start. */
export function parseChildRequest(
  resource: string,
  params: Json,
  parentExecutionId: string,
): ChildRequest {
  const pattern = childPattern(resource);
  if (pattern === undefined) throw invalid(`'${resource}' is not states:startExecution`);
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    throw invalid("Parameters must be an object with StateMachineArn");
  }
  const p = params as JsonObject;
  const target = parseMachineArn(p.StateMachineArn);
  const request: ChildRequest = {
    pattern,
    ...target,
    input: childInput(p.Input, parentExecutionId),
  };
  if (p.Name !== undefined) {
    if (typeof p.Name !== "string" || !/^[^\s<>{}[\]?*"#%\\^|~`$&,;:/]{1,80}$/.test(p.Name)) {
      throw new TaskError(
        "StepFunctions.InvalidNameException",
        `Invalid Name: '${String(p.Name)}'`,
      );
    }
    request.name = p.Name;
  }
  return request;
}

/**
 * The child's name when the task names none: derived from the task's operation key
 * and attempt, so a redelivered attempt (after a crash) starts the same child, found
 * by name, and a Retry attempt starts a new one. UUID-shaped, as AWS's names are.
 */
export function derivedChildName(operationKey: string, attempt: number): string {
  const hex = createHash("sha256").update(`${operationKey}#${attempt}`).digest("hex");
  return [
    hex.slice(0, 8),
    hex.slice(8, 12),
    hex.slice(12, 16),
    hex.slice(16, 20),
    hex.slice(20, 32),
  ].join("-");
}
