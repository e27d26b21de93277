import { isValidAliasName } from "../../runtime/definitions/aliases.js";
import {
  ARN_BASE,
  AWS_ACCOUNT,
  AWS_REGION,
  executionArn,
  isValidExecutionName,
  isValidMachinePart,
  isValidName,
} from "../../runtime/store/ids.js";
import { awsError } from "./errors.js";

/**
 * The ARNs of the AWS API: `arn:aws:states:<region>:<account>:<kind>:<rest>`, the
 * region and account being the deployment's (runtime/store/ids.ts). A malformed ARN is
 * InvalidArn; a well-formed one of another region or account names nothing here.
 */

export type StateMachineRef = { name: string; version?: number; alias?: string };

const ARN = /^arn:aws[a-z-]*:states:([a-z0-9-]*):(\d{12}|[^:]*):([A-Za-z]+):(.+)$/;

function parse(arn: unknown, field: string, kind: string): { rest: string; ours: boolean } {
  if (typeof arn !== "string" || arn.length < 1 || arn.length > 2048) {
    throw awsError("InvalidArn", `Invalid Arn: '${String(arn)}' (${field})`);
  }
  const m = ARN.exec(arn);
  if (!m || m[3] !== kind) {
    throw awsError("InvalidArn", `Invalid Arn: '${arn}' is not the ARN of a ${kind} (${field})`);
  }
  return { rest: m[4]!, ours: m[1] === AWS_REGION && m[2] === AWS_ACCOUNT };
}

/** `…:stateMachine:<name>`, `…:<name>:<version>` or `…:<name>:<alias>`. */
export function parseStateMachineArn(
  arn: unknown,
  field = "stateMachineArn",
): StateMachineRef & { ours: boolean } {
  const { rest, ours } = parse(arn, field, "stateMachine");
  const [name = "", qualifier, ...extra] = rest.split(":");
  if (extra.length > 0 || !isValidName(name)) {
    throw awsError("InvalidArn", `Invalid Arn: '${String(arn)}' (${field})`);
  }
  if (qualifier === undefined) return { name, ours };
  if (/^[1-9]\d{0,8}$/.test(qualifier)) return { name, version: Number(qualifier), ours };
  if (isValidAliasName(qualifier)) return { name, alias: qualifier, ours };
  throw awsError("InvalidArn", `Invalid Arn: '${String(arn)}' (${field})`);
}

/** An unqualified state machine ARN (the actions that take no version or alias). */
export function unqualifiedStateMachine(
  arn: unknown,
  field = "stateMachineArn",
): { name: string; ours: boolean } {
  const ref = parseStateMachineArn(arn, field);
  if (ref.version !== undefined || ref.alias !== undefined) {
    throw awsError(
      "ValidationException",
      `${field} must be an unqualified state machine ARN (no version or alias)`,
      "API_DOES_NOT_SUPPORT_LABELED_ARNS",
    );
  }
  return ref;
}

export type ExecutionRef =
  | { kind: "standard"; executionId: string; machine: string; name: string; ours: boolean }
  | { kind: "express"; machine: string; name: string; ours: boolean };

/** `…:execution:<machine>:<name>` (or an Express one, `…:express:<machine>:<name>:<id>`). */
export function parseExecutionArn(arn: unknown, field = "executionArn"): ExecutionRef {
  if (typeof arn === "string" && /^arn:aws[a-z-]*:states:[^:]*:[^:]*:express:/.test(arn)) {
    const { rest, ours } = parse(arn, field, "express");
    const [machine = "", name = ""] = rest.split(":");
    return { kind: "express", machine, name, ours };
  }
  const { rest, ours } = parse(arn, field, "execution");
  const [machine = "", name = "", ...extra] = rest.split(":");
  if (extra.length > 0 || !isValidMachinePart(machine) || !isValidExecutionName(name)) {
    throw awsError("InvalidArn", `Invalid Arn: '${String(arn)}' (${field})`);
  }
  return { kind: "standard", executionId: executionArn(machine, name), machine, name, ours };
}

export function parseActivityArn(
  arn: unknown,
  field = "activityArn",
): { name: string; ours: boolean } {
  const { rest, ours } = parse(arn, field, "activity");
  if (!isValidName(rest)) throw awsError("InvalidArn", `Invalid Arn: '${String(arn)}' (${field})`);
  return { name: rest, ours };
}

/** A resource that takes tags: an unqualified state machine or an activity. */
export function parseTaggableArn(
  arn: unknown,
  field = "resourceArn",
): { kind: "stateMachine" | "activity"; name: string; ours: boolean } {
  if (typeof arn === "string" && /^arn:aws[a-z-]*:states:[^:]*:[^:]*:activity:/.test(arn)) {
    return { kind: "activity", ...parseActivityArn(arn, field) };
  }
  return { kind: "stateMachine", ...unqualifiedStateMachine(arn, field) };
}

export { ARN_BASE };
