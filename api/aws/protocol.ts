import { parseTraceparent, type ExecutionTrace } from "../../runtime/tracing/trace-context.js";
import type { Admission } from "../admission.js";
import type { FastifyPluginAsync, FastifyReply } from "fastify";
import type { Runtime } from "../../runtime/contract/index.js";
import type { TaskRunner } from "../../task-runners/index.js";
import { grants, type ApiCaller, type ApiKey, type Permission } from "../auth.js";
import { jsonProblem } from "../body.js";
import { awsError, toAwsError, type AwsError } from "./errors.js";
import type { Body } from "./fields.js";
import { SigningKeys } from "./signing-keys.js";
import { verifySignature } from "./sigv4.js";

/**
 * The AWS Step Functions API: `POST /` with `X-Amz-Target: AWSStepFunctions.<Action>`
 * and a JSON 1.0 body (`application/x-amz-json-1.0`), signed with SigV4 — so the AWS
 * SDKs and CLI work against Stepwise unchanged. Each action is a function of the
 * parsed body on the shared runtime; this module does the protocol around them.
 */

export interface AwsContext {
  runtime: Runtime;
  /** The key that signed the request (none when keys are off). */
  caller?: ApiCaller;
  /** Whether this service's workers can call a Task Resource. */
  serves: (resource: string) => boolean;
  /** The task runners TestState calls for a Task without a mock (api/test-state.ts). */
  runners?: readonly TaskRunner[];
  /** Start admission control (api/admission.ts), as the REST start has it. */
  admission?: Admission;
  /** The request's W3C `traceparent` (and `tracestate`): a start joins that trace. */
  trace?: ExecutionTrace;
}

export interface Action {
  permission: Exclude<Permission, "public">;
  run(body: Body, ctx: AwsContext): Promise<unknown>;
}

export type ActionTable = Record<string, Action>;

export interface AwsPluginOptions {
  runtime: Runtime;
  apiKeys: readonly ApiKey[];
  serves: (resource: string) => boolean;
  runners?: readonly TaskRunner[];
  actions: ActionTable;
  admission?: Admission;
}

const TARGET = /^AWSStepFunctions\.([A-Za-z]+)$/;
const CONTENT_TYPE = "application/x-amz-json-1.0";

function sendError(reply: FastifyReply, error: AwsError): FastifyReply {
  return reply
    .code(error.status)
    .header("x-amzn-errortype", error.type)
    .type(CONTENT_TYPE)
    .send(JSON.stringify(error.toBody()));
}

export const awsPlugin: FastifyPluginAsync<AwsPluginOptions> = async (
  app,
  { runtime, apiKeys, serves, runners, actions, admission },
) => {
  // SigV4 signs the payload's hash: the body is kept as the exact text received,
  // whatever its content type, in this plugin's context only.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));
  // The signing keys derived from this server's API keys, kept as long as it runs.
  const signingKeys = new SigningKeys();

  app.setErrorHandler((error, request, reply) => {
    const aws = toAwsError(error);
    // The request's one log line (api/request-log.ts) carries a 5xx's error and stack.
    if (aws.status >= 500) request.failure = error;
    const retryAfter = (error as { retryAfterSeconds?: number }).retryAfterSeconds;
    if (retryAfter !== undefined) reply.header("retry-after", String(retryAfter));
    return sendError(reply, aws);
  });

  // A callback hook, not an async one: no promise and microtask per request.
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header("x-amzn-requestid", request.id);
    done(null, payload);
  });

  app.post("/", { config: { hidden: true } }, async (request, reply) => {
    const raw = typeof request.body === "string" ? request.body : "";
    let caller: ApiCaller | undefined;
    let key: ApiKey | undefined;
    if (apiKeys.length > 0) {
      key = verifySignature(
        apiKeys,
        { method: request.method, url: request.url, headers: request.headers, body: raw },
        signingKeys,
      );
      caller = { name: key.name, scope: key.scope, groups: key.groups ?? [] };
      // Named on the request's log line, as the REST API's auth hook does.
      request.caller = caller;
    }
    const target = request.headers["x-amz-target"];
    const actionName = typeof target === "string" ? TARGET.exec(target)?.[1] : undefined;
    const action =
      actionName !== undefined && Object.prototype.hasOwnProperty.call(actions, actionName)
        ? actions[actionName]
        : undefined;
    if (!action || actionName === undefined) {
      throw awsError(
        "UnknownOperationException",
        `Unknown operation '${String(target ?? "")}': X-Amz-Target must be AWSStepFunctions.<Action>`,
      );
    }
    if (key && !grants(key, action.permission)) {
      throw awsError(
        "AccessDeniedException",
        `User: ${key.name} (scope ${key.scope}) is not authorized to perform: states:${actionName}`,
      );
    }
    const body = parseBody(raw);
    const trace = parseTraceparent(request.headers.traceparent, request.headers.tracestate);
    const result = await action.run(body, {
      runtime,
      serves,
      ...(runners ? { runners } : {}),
      ...(caller ? { caller } : {}),
      ...(admission ? { admission } : {}),
      ...(trace ? { trace } : {}),
    });
    return reply
      .code(200)
      .type(CONTENT_TYPE)
      .send(JSON.stringify(result ?? {}));
  });
};

function parseBody(raw: string): Body {
  if (raw.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw awsError("SerializationException", `The body is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw awsError("SerializationException", "The body must be a JSON object");
  }
  const problem = jsonProblem(value);
  if (problem) throw awsError("SerializationException", `The body is refused: ${problem.reason}`);
  return value as Body;
}
