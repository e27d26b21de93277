import type { Json, JsonObject } from "../../engine/core/json.js";
import { TaskError } from "../runner.js";
import type { HttpAnswer } from "./clients.js";
import { sdkMetadata } from "./metadata.js";

/**
 * `arn:aws:states:::lambda:invoke`, as AWS's developer guide describes it ("Invoke
 * an AWS Lambda function with Step Functions",
 * https://docs.aws.amazon.com/step-functions/latest/dg/connect-lambda.html):
 * Parameters are Invoke's (`FunctionName`, `Payload`, `InvocationType`, `Qualifier`,
 * `ClientContext`, `LogType`); `Payload` may be any JSON and is sent as its text (a
 * string that is JSON text is sent as it is). The result is Invoke's answer with
 * `Payload` parsed from JSON when it is JSON, beside `StatusCode`, `ExecutedVersion`
 * and the `SdkHttpMetadata` / `SdkResponseMetadata` AWS's optimized integration adds.
 *
 * A function error (`X-Amz-Function-Error`, the SDK's `FunctionError`) fails the task
 * with the error document's `errorType` as the error and the document itself as the
 * cause, as AWS does (a Catch reads `errorMessage` with `States.StringToJson($.Cause)`);
 * without an `errorType` the error is `Lambda.Unknown`.
 */
const PARAMETERS = [
  "FunctionName",
  "Payload",
  "InvocationType",
  "Qualifier",
  "ClientContext",
  "LogType",
] as const;

export function invokeInput(args: JsonObject): Record<string, unknown> {
  if (typeof args.FunctionName !== "string") {
    throw new TaskError("States.Runtime", "lambda:invoke needs a FunctionName string");
  }
  const input: Record<string, unknown> = {};
  for (const name of PARAMETERS) {
    const value = args[name];
    if (value === undefined) continue;
    input[name] = name === "Payload" ? Buffer.from(payloadText(value), "utf8") : value;
  }
  return input;
}

function payloadText(value: Json): string {
  if (typeof value === "string") {
    try {
      JSON.parse(value);
      return value;
    } catch {
      return JSON.stringify(value);
    }
  }
  return JSON.stringify(value);
}

interface InvokeOutput {
  StatusCode?: number;
  FunctionError?: string;
  LogResult?: string;
  Payload?: Uint8Array;
  ExecutedVersion?: string;
  $metadata?: { requestId?: string };
}

export function invokeResult(raw: unknown, answer: HttpAnswer | undefined): Json {
  const output = raw as InvokeOutput;
  const text = output.Payload ? Buffer.from(output.Payload).toString("utf8") : "";
  if (output.FunctionError !== undefined) throw functionError(text);
  const result: JsonObject = {};
  if (output.ExecutedVersion !== undefined) result.ExecutedVersion = output.ExecutedVersion;
  if (output.LogResult !== undefined) result.LogResult = output.LogResult;
  result.Payload = parsed(text);
  Object.assign(result, sdkMetadata(answer, output.$metadata?.requestId));
  if (output.StatusCode !== undefined) result.StatusCode = output.StatusCode;
  return result;
}

function functionError(document: string): TaskError {
  const error = parsed(document);
  if (
    typeof error === "object" &&
    error !== null &&
    !Array.isArray(error) &&
    typeof error.errorType === "string" &&
    error.errorType !== ""
  ) {
    return new TaskError(error.errorType, document);
  }
  return new TaskError(
    "Lambda.Unknown",
    `The cause could not be determined because Lambda did not return an error type. Returned payload: ${document}`,
  );
}

function parsed(text: string): Json {
  if (text === "") return text;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}
