import type { JsonObject } from "../../engine/core/json.js";
import type { HttpAnswer } from "./clients.js";

/**
 * The `SdkHttpMetadata` and `SdkResponseMetadata` fields AWS's optimized Lambda,
 * DynamoDB, SQS and SNS integrations add to a result (AWS's own SDK's response
 * metadata): every header of the answer (`AllHttpHeaders`, each a list), the same
 * with one value each (`HttpHeaders`), the status, and the request id. Header names
 * come as Node reads them, in lower case.
 */
export function sdkMetadata(
  answer: HttpAnswer | undefined,
  requestId: string | undefined,
): JsonObject {
  const headers = answer?.headers ?? {};
  const all: JsonObject = {};
  const single: JsonObject = {};
  for (const [name, value] of Object.entries(headers)) {
    all[name] = [value];
    single[name] = value;
  }
  return {
    SdkHttpMetadata: {
      AllHttpHeaders: all,
      HttpHeaders: single,
      HttpStatusCode: answer?.statusCode ?? 200,
    },
    SdkResponseMetadata: { RequestId: requestId ?? headers["x-amzn-requestid"] ?? "" },
  };
}
