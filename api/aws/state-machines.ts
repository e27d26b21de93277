import type { StateMachineDefinition } from "../../engine/core/definition.js";
import {
  RuntimeError,
  type StateMachineDetail,
  type StateMachineType,
} from "../../runtime/contract/index.js";
import { defaultRoleArn } from "../../runtime/definitions/machine-create.js";
import { isValidName, stateMachineArn } from "../../runtime/store/ids.js";
import { check, definitionSource } from "../definition.js";
import { parseStateMachineArn, unqualifiedStateMachine } from "./arns.js";
import { awsError, invalidField } from "./errors.js";
import {
  epochSeconds,
  nextToken,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalString,
  pageSize,
  requiredString,
  tagList,
  type Body,
} from "./fields.js";
import type { ActionTable, AwsContext } from "./protocol.js";

/**
 * State machines: CreateStateMachine, DescribeStateMachine, UpdateStateMachine,
 * DeleteStateMachine, ListStateMachines, ValidateStateMachineDefinition.
 */

const TYPES: readonly StateMachineType[] = ["STANDARD", "EXPRESS"];
/** AWS's definition quota (1 MiB). */
const MAX_DEFINITION = 1024 * 1024;

/** The definition text, validated; InvalidDefinition in AWS's wording otherwise. */
export function readDefinition(
  body: Body,
  ctx: AwsContext,
  field = "definition",
): StateMachineDefinition {
  const text = requiredString(body, field, { max: MAX_DEFINITION });
  const result = check(definitionSource({ definition: text }, undefined), ctx.serves);
  if (result.valid && result.definition) return result.definition;
  const first = result.diagnostics.find((d) => d.severity === "error") ?? result.diagnostics[0];
  const detail = first ? `${first.code}: ${first.message} at ${first.path || "/"}` : "invalid";
  throw awsError("InvalidDefinition", `Invalid State Machine Definition: '${detail}'`);
}

function readName(body: Body, field = "name"): string {
  const name = requiredString(body, field, { max: 80 });
  if (!isValidName(name)) {
    throw awsError(
      "InvalidName",
      `Invalid Name: '${name}' (letters, digits, '_', '.' and '-' only, 1–80 characters)`,
    );
  }
  return name;
}

function versionDescription(body: Body, publish: boolean | undefined): string | undefined {
  const description = optionalString(body, "versionDescription", { max: 256 });
  if (description !== undefined && !publish) {
    throw invalidField("versionDescription", "Member requires publish to be true");
  }
  return description;
}

/** The machine a (possibly qualified) ARN names here; another region or account names none. */
export function ours<T extends { ours: boolean; name: string }>(ref: T): T {
  if (!ref.ours) {
    throw awsError("StateMachineDoesNotExist", `State Machine Does Not Exist: '${ref.name}'`);
  }
  return ref;
}

/**
 * One runtime call (machine-create.ts has the rule): an identical create answers the
 * existing machine, its tags and publication as they are; another is
 * StateMachineAlreadyExists.
 */
async function create(body: Body, ctx: AwsContext): Promise<unknown> {
  const name = readName(body);
  const definition = readDefinition(body, ctx);
  const roleArn = optionalString(body, "roleArn", { min: 1, max: 256 });
  const type = optionalEnum(body, "type", TYPES) ?? "STANDARD";
  const tags = tagList(body);
  const publish = optionalBoolean(body, "publish");
  const description = versionDescription(body, publish);
  let created;
  try {
    created = await ctx.runtime.createStateMachineIdempotent(name, definition, {
      // Kept byte for byte: DescribeStateMachine answers the text as it was sent.
      definitionText: body.definition as string,
      type,
      tags,
      ...(roleArn !== undefined ? { roleArn } : {}),
      ...(publish ? { publish } : {}),
      ...(description !== undefined ? { versionDescription: description } : {}),
      ...(ctx.caller ? { caller: ctx.caller } : {}),
    });
  } catch (err) {
    if (!(err instanceof RuntimeError) || err.code !== "StateMachineAlreadyExists") throw err;
    throw awsError(
      "StateMachineAlreadyExists",
      `State Machine Already Exists: '${stateMachineArn(name)}'`,
    );
  }
  const out: Record<string, unknown> = {
    stateMachineArn: stateMachineArn(name),
    creationDate: epochSeconds(created.machineCreatedAt),
  };
  if (created.published) {
    out.stateMachineVersionArn = stateMachineArn(name, created.published.version);
  }
  return out;
}

/** DescribeStateMachine's answer for a machine, or for one of its published versions. */
export function describeBody(
  machine: StateMachineDetail,
  arn: string,
  version?: { description?: string; publishedAt: string },
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    stateMachineArn: arn,
    name: machine.name,
    status: "ACTIVE",
    definition: machine.definitionText ?? JSON.stringify(machine.definition),
    roleArn: machine.roleArn ?? defaultRoleArn(),
    type: machine.type,
    creationDate: epochSeconds(version ? version.publishedAt : machine.machineCreatedAt),
    loggingConfiguration: { level: "OFF", includeExecutionData: false },
    tracingConfiguration: { enabled: false },
    revisionId: String(machine.version),
  };
  if (version?.description !== undefined) out.description = version.description;
  return out;
}

async function describe(body: Body, ctx: AwsContext): Promise<unknown> {
  const arn = requiredString(body, "stateMachineArn", { max: 256 });
  const ref = ours(parseStateMachineArn(arn));
  if (ref.alias !== undefined) {
    throw awsError(
      "ValidationException",
      "DescribeStateMachine takes a state machine or version ARN; describe an alias with DescribeStateMachineAlias",
      "API_DOES_NOT_SUPPORT_LABELED_ARNS",
    );
  }
  if (ref.version !== undefined) {
    const published = await ctx.runtime.getPublishedVersion(ref.name, ref.version);
    const machine = await ctx.runtime.getStateMachine(ref.name, ref.version);
    return describeBody(machine, arn, published);
  }
  return describeBody(await ctx.runtime.getStateMachine(ref.name), arn);
}

async function update(body: Body, ctx: AwsContext): Promise<unknown> {
  const { name } = ours(unqualifiedStateMachine(requiredString(body, "stateMachineArn")));
  const definition = body.definition === undefined ? undefined : readDefinition(body, ctx);
  const roleArn = optionalString(body, "roleArn", { min: 1, max: 256 });
  const publish = optionalBoolean(body, "publish");
  const description = versionDescription(body, publish);
  if (
    definition === undefined &&
    roleArn === undefined &&
    body.loggingConfiguration === undefined &&
    body.tracingConfiguration === undefined &&
    !publish
  ) {
    throw awsError(
      "MissingRequiredParameter",
      "Request is missing a required parameter: give a definition, a roleArn, a loggingConfiguration or a tracingConfiguration",
    );
  }
  const updated = await ctx.runtime.updateStateMachine(name, definition, {
    ...(definition !== undefined ? { definitionText: body.definition as string } : {}),
    ...(roleArn !== undefined ? { roleArn } : {}),
    ...(ctx.caller ? { caller: ctx.caller } : {}),
  });
  const out: Record<string, unknown> = {
    updateDate: epochSeconds(updated.created ? updated.createdAt : new Date().toISOString()),
    revisionId: String(updated.version),
  };
  if (publish) {
    const published = await ctx.runtime.publishStateMachineVersion(name, {
      ...(description !== undefined ? { description } : {}),
    });
    out.stateMachineVersionArn = stateMachineArn(name, published.version);
  }
  return out;
}

async function remove(body: Body, ctx: AwsContext): Promise<unknown> {
  const ref = parseStateMachineArn(requiredString(body, "stateMachineArn"));
  if (ref.version !== undefined || ref.alias !== undefined) {
    throw awsError(
      "ValidationException",
      "Delete a version with DeleteStateMachineVersion and an alias with DeleteStateMachineAlias",
      "API_DOES_NOT_SUPPORT_LABELED_ARNS",
    );
  }
  if (!ref.ours) return {};
  try {
    await ctx.runtime.deleteStateMachine(ref.name);
  } catch (err) {
    // Deleting what is already gone succeeds, as on AWS.
    if (!(err instanceof RuntimeError) || err.code !== "StateMachineDoesNotExist") throw err;
  }
  return {};
}

async function list(body: Body, ctx: AwsContext): Promise<unknown> {
  const limit = pageSize(body);
  const cursor = nextToken(body);
  const page = await ctx.runtime.listStateMachines({
    ...(limit !== undefined ? { limit } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  const stateMachines = [];
  for (const item of page.items) {
    const detail = await ctx.runtime.getStateMachine(item.name).catch(() => undefined);
    if (!detail) continue; // deleted meanwhile
    stateMachines.push({
      stateMachineArn: stateMachineArn(item.name),
      name: item.name,
      type: detail.type,
      creationDate: epochSeconds(detail.machineCreatedAt),
    });
  }
  return page.nextCursor !== undefined
    ? { stateMachines, nextToken: page.nextCursor }
    : { stateMachines };
}

async function validate(body: Body, ctx: AwsContext): Promise<unknown> {
  const text = requiredString(body, "definition", { max: MAX_DEFINITION });
  optionalEnum(body, "type", TYPES);
  const severity = optionalEnum(body, "severity", ["ERROR", "WARNING"] as const) ?? "ERROR";
  const max = optionalInteger(body, "maxResults", 0, 100) || 100;
  const result = check(definitionSource({ definition: text }, undefined), ctx.serves);
  const all = result.diagnostics
    .filter((d) => d.severity === "error" || severity === "WARNING")
    .map((d) => ({
      severity: d.severity === "error" ? "ERROR" : "WARNING",
      code: d.code,
      message: d.message,
      location: d.path || "/",
    }));
  return {
    result: result.valid ? "OK" : "FAIL",
    diagnostics: all.slice(0, max),
    truncated: all.length > max,
  };
}

export const stateMachineActions: ActionTable = {
  CreateStateMachine: { permission: "definitions:write", run: create },
  DescribeStateMachine: { permission: "definitions:read", run: describe },
  UpdateStateMachine: { permission: "definitions:write", run: update },
  DeleteStateMachine: { permission: "definitions:write", run: remove },
  ListStateMachines: { permission: "definitions:read", run: list },
  ValidateStateMachineDefinition: { permission: "definitions:read", run: validate },
};
