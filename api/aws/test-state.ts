import type { Json, JsonObject } from "../../engine/core/json.js";
import type { InspectionLevel } from "../../engine/testing/test-state.js";
import { ApiError } from "../errors.js";
import { runTestState } from "../test-state.js";
import { awsError, invalidField } from "./errors.js";
import { jsonString, optionalEnum, optionalString, requiredString, type Body } from "./fields.js";
import type { ActionTable, AwsContext } from "./protocol.js";

/**
 * TestState: one state of a definition, run once with an input, a Task on its mocked
 * result or, without a mock, calling its resource as an execution would.
 */

const LEVELS: readonly InspectionLevel[] = ["INFO", "DEBUG", "TRACE"];

function text(value: Json | undefined): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}

async function run(body: Body, ctx: AwsContext): Promise<unknown> {
  const definitionText = requiredString(body, "definition", { max: 1024 * 1024 });
  let definition: unknown;
  try {
    definition = JSON.parse(definitionText);
  } catch (err) {
    throw awsError(
      "InvalidDefinition",
      `Invalid State Machine Definition: '${(err as Error).message}'`,
    );
  }
  if (typeof definition !== "object" || definition === null || Array.isArray(definition)) {
    throw awsError("InvalidDefinition", "Invalid State Machine Definition: not a JSON object");
  }
  const input = jsonString(body, "input", "InvalidExecutionInput", {}) as Json;
  const inspectionLevel = optionalEnum(body, "inspectionLevel", LEVELS) ?? "INFO";
  const stateName = optionalString(body, "stateName", { min: 1, max: 80 });
  let mock: { result: Json } | { error: string; cause?: string } | undefined;
  if (body.mock !== undefined && body.mock !== null) {
    if (typeof body.mock !== "object") throw invalidField("mock", "Member must be a MockInput");
    const m = body.mock as Body;
    if (m.result !== undefined) {
      mock = { result: jsonString(m, "result", "ValidationException", null) as Json };
    } else if (typeof m.errorOutput === "object" && m.errorOutput !== null) {
      const e = m.errorOutput as Body;
      const error = optionalString(e, "error", { max: 256 }) ?? "States.TaskFailed";
      const cause = optionalString(e, "cause", { max: 32768 });
      mock = cause !== undefined ? { error, cause } : { error };
    } else {
      throw invalidField("mock", "Member must have a result or an errorOutput");
    }
  }
  let result;
  try {
    result = await runTestState(
      {
        definition: definition as JsonObject,
        input,
        inspectionLevel,
        ...(stateName !== undefined ? { stateName } : {}),
        ...(mock ? { mock } : {}),
      },
      ctx.serves,
      ctx.runners,
    );
  } catch (err) {
    if (err instanceof ApiError && err.code === "InvalidDefinition") {
      throw awsError("InvalidDefinition", `Invalid State Machine Definition: '${err.message}'`);
    }
    throw err;
  }
  const out: Record<string, unknown> = { status: result.status };
  if (result.output !== undefined) out.output = text(result.output);
  if (result.error !== undefined) out.error = result.error;
  if (result.cause !== undefined) out.cause = result.cause;
  if (result.nextState !== undefined) out.nextState = result.nextState;
  if (result.inspectionData) {
    const data: Record<string, string> = {};
    for (const [key, value] of Object.entries(result.inspectionData)) {
      if (value !== undefined) data[key] = JSON.stringify(value);
    }
    out.inspectionData = data;
  }
  return out;
}

export const testStateActions: ActionTable = {
  TestState: { permission: "definitions:read", run },
};
