import { TaskError } from "../runner.js";
import { EGRESS_REFUSED } from "./transport.js";
import { BodyTooLarge } from "./values.js";
import { MissingClientPackage } from "./clients.js";

/**
 * SDK failures → the error names Step Functions reports, so that Retry and Catch
 * written for AWS match here too:
 *  - a service exception is `<Prefix>.<ExceptionName>`, the name always ending in
 *    `Exception` (AWS developer guide, "Learning to use AWS service SDK integrations":
 *    S3's `BucketAlreadyExists` is caught as `S3.BucketAlreadyExistsException`). The
 *    prefix is the optimized integration's (`Lambda`, `DynamoDB`, `SQS`, `SNS`,
 *    `EventBridge`) or, for `aws-sdk:`, the service in PascalCase (`S3`, `DynamoDb`);
 *  - a failure on the client's side (no credentials, an endpoint that does not
 *    answer, one the egress policy refuses) is `<Prefix>.SdkClientException`, the
 *    name AWS's SDK gives it and AWS's guide retries for Lambda ("Handle transient
 *    Lambda service exceptions"). Causes say what to do about it;
 *  - a missing client package is `States.TaskFailed`, naming the package.
 * The cause of a service exception follows AWS's: the message, then
 * `(Service: …; Status Code: …; Error Code: …; Request ID: …)`.
 */
export interface ErrorContext {
  /** `Lambda`, `DynamoDB`, `S3`… */
  prefix: string;
  /** The service as causes name it (`AWSLambda`, `AmazonDynamoDBv2`, `S3`). */
  serviceLabel: string;
  /** The endpoint override variable's key (`S3`, `DYNAMODB`) and its value, if set. */
  envKey: string;
  endpoint: string | undefined;
}

interface SdkError extends Error {
  $fault?: "client" | "server";
  $metadata?: { httpStatusCode?: number; requestId?: string; extendedRequestId?: string };
  code?: string;
  Code?: string;
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "EPIPE",
]);

export function exceptionName(name: string): string {
  return name.endsWith("Exception") ? name : `${name}Exception`;
}

export function taskErrorFrom(err: unknown, context: ErrorContext): TaskError {
  if (err instanceof TaskError) return err;
  if (err instanceof MissingClientPackage) return new TaskError("States.TaskFailed", err.message);
  if (err instanceof BodyTooLarge) {
    return new TaskError(
      "States.DataLimitExceeded",
      `${context.serviceLabel}: ${err.message}; a task's result may not be larger`,
    );
  }
  const e = (err instanceof Error ? err : new Error(String(err))) as SdkError;
  const client = `${context.prefix}.SdkClientException`;
  if (e.code === EGRESS_REFUSED || e.name === "EgressRefused") {
    return new TaskError(client, `Unable to execute HTTP request: ${e.message}`);
  }
  if (e.name === "CredentialsProviderError" || /credential/i.test(e.name)) {
    return new TaskError(
      client,
      `Unable to load AWS credentials: ${e.message}. Give the worker credentials through the standard chain: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE with ~/.aws/config, or a container or instance role`,
    );
  }
  const status = e.$metadata?.httpStatusCode;
  if (e.$fault !== undefined && status !== undefined && status > 0) {
    const code = e.name && e.name !== "Error" ? e.name : (e.Code ?? "UnknownError");
    const details = [
      `Service: ${context.serviceLabel}`,
      `Status Code: ${status}`,
      `Error Code: ${code}`,
      `Request ID: ${e.$metadata?.requestId ?? "null"}`,
      ...(e.$metadata?.extendedRequestId
        ? [`Extended Request ID: ${e.$metadata.extendedRequestId}`]
        : []),
    ];
    return new TaskError(
      `${context.prefix}.${exceptionName(code)}`,
      `${e.message || code} (${details.join("; ")})`,
    );
  }
  const networkCode = e.code ?? (e.cause as { code?: string } | undefined)?.code;
  if ((networkCode !== undefined && NETWORK_CODES.has(networkCode)) || e.name === "TimeoutError") {
    const where =
      context.endpoint !== undefined
        ? `the endpoint ${context.endpoint} (STEPWISE_AWS_ENDPOINT_${context.envKey})`
        : `${context.serviceLabel}'s endpoint for the region`;
    return new TaskError(
      client,
      `Unable to execute HTTP request: ${e.message} — ${where} did not answer; check that it is reachable from this worker`,
    );
  }
  return new TaskError(client, `${e.name}: ${e.message}`);
}
