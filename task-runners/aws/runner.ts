import type { Json, JsonObject } from "../../engine/core/json.js";
import { isJsonObject } from "../../engine/core/json.js";
import { DEFAULT_EGRESS, type EgressPolicy } from "../egress.js";
import { TaskError, type TaskRequest, type TaskRunner } from "../runner.js";
import { AwsClients, httpAnswerOf, type ClientSettings } from "./clients.js";
import { taskErrorFrom, type ErrorContext } from "./errors.js";
import { putEventsLocally, type PublishLocal } from "./local-events.js";
import { INTEGRATIONS } from "./optimized.js";
import { parseAwsResource, type AwsResource } from "./resources.js";
import { awsService, commandName, type AwsService } from "./services.js";
import { outputJson } from "./values.js";

/**
 * AWS service integrations (issue 38): a definition written for AWS Step Functions
 * calls the real services through the AWS SDK for JavaScript v3, unchanged. The
 * optimized integrations (optimized.ts) and the generic
 * `arn:aws:states:::aws-sdk:<service>:<action>` (AWS developer guide, "Learning to use
 * AWS service SDK integrations in Step Functions"): the action `putObject` is the
 * client's `PutObjectCommand`, Parameters are its input as AWS writes them (PascalCase),
 * and the output is the command's, as JSON (values.ts).
 *
 * Options come from config/ (STEPWISE_AWS_REGION, STEPWISE_AWS_ENDPOINT_<SERVICE>,
 * STEPWISE_EGRESS_ALLOW); clients are made when first needed (clients.ts). A failure
 * of any kind ends the task with the error name AWS reports (errors.ts), never the
 * worker.
 */
export interface AwsRunnerOptions {
  /** STEPWISE_AWS_REGION when set; else the resource's, the SDK's chain, us-east-1. */
  region?: string;
  /** Endpoint overrides by service key (`S3`, `DYNAMODB`, `SQS`, `SNS`, `LAMBDA`, `EVENTBRIDGE`…). */
  endpoints?: Readonly<Record<string, string>>;
  /** What an endpoint may be (default: nothing loopback, private or link-local). */
  egress?: EgressPolicy;
  /** Static credentials (default: the SDK's credential chain). */
  credentials?: ClientSettings["credentials"];
  /** The largest streamed body (S3 GetObject) read into a result (default 256 KiB). */
  maxResponseBytes?: number;
  /** How client packages are loaded (default: `import` from node_modules). */
  importer?: ClientSettings["importer"];
  /**
   * STEPWISE_EVENTS_LOCAL=true: publishes `events:putEvents` entries for the default
   * bus into Stepwise's own (the worker passes its event bus in; local-events.ts).
   * Unset: every entry goes to EventBridge.
   */
  publishLocal?: PublishLocal;
}

export interface AwsRunner extends TaskRunner {
  /** Closes the clients' sockets. */
  close(): void;
}

const MAX_BODY_BYTES = 256 * 1024;

export function isAwsIntegration(resource: string): boolean {
  return parseAwsResource(resource) !== undefined;
}

export function awsRunner(options: AwsRunnerOptions = {}): AwsRunner {
  const clients = new AwsClients({
    egress: options.egress ?? DEFAULT_EGRESS,
    ...(options.region !== undefined ? { region: options.region } : {}),
    ...(options.endpoints !== undefined ? { endpoints: options.endpoints } : {}),
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    ...(options.importer !== undefined ? { importer: options.importer } : {}),
  });
  const maxBodyBytes = options.maxResponseBytes ?? MAX_BODY_BYTES;
  const publishLocal = options.publishLocal;

  async function call(
    request: TaskRequest,
    resource: AwsResource,
    service: AwsService,
    context: ErrorContext,
    attempt: (signal: AbortSignal) => Promise<Json>,
  ): Promise<Json> {
    const timeout =
      request.timeoutSeconds !== undefined
        ? AbortSignal.timeout(request.timeoutSeconds * 1000)
        : undefined;
    const signal = timeout ? AbortSignal.any([request.signal, timeout]) : request.signal;
    try {
      return await attempt(signal);
    } catch (err) {
      if (request.signal.aborted) throw err;
      if (timeout?.aborted) {
        throw new TaskError(
          "States.Timeout",
          `${service.id}:${resource.action} did not answer within ${request.timeoutSeconds} s`,
        );
      }
      throw taskErrorFrom(err, context);
    }
  }

  return {
    name: "aws",
    handles: isAwsIntegration,
    close: () => clients.close(),
    async run(request) {
      const resource = parseAwsResource(request.resource);
      if (!resource) {
        throw new TaskError("States.Runtime", `'${request.resource}' is not an AWS integration`);
      }
      const args = parameters(request.input, request.resource);
      if (resource.kind === "optimized") {
        const integration = INTEGRATIONS[resource.service]![resource.action]!;
        const service = awsService(integration.sdkService);
        const context: ErrorContext = {
          prefix: integration.prefix,
          serviceLabel: integration.serviceLabel,
          envKey: service.envKey,
          endpoint: clients.endpoint(service),
        };
        return call(request, resource, service, context, async (signal) => {
          const input = integration.input(args, request);
          const send = async (sdkInput: Record<string, unknown>): Promise<unknown> => {
            const client = await clients.client(service, resource.region);
            const Command = await clients.command(service, integration.command);
            if (!Command) throw new Error(`${service.pkg} has no ${integration.command}`);
            return client.send(new Command(sdkInput), { abortSignal: signal });
          };
          if (publishLocal !== undefined && resource.service === "events") {
            // The default bus's entries into Stepwise's own; the others to EventBridge.
            const answer = await putEventsLocally(
              input as { Entries: Json[] },
              request.operationKey,
              publishLocal,
              async (entries) =>
                (await outputJson(
                  await send({ ...input, Entries: entries }),
                  maxBodyBytes,
                )) as JsonObject,
            );
            return integration.result(answer, undefined, maxBodyBytes);
          }
          const output = await send(input);
          return integration.result(output, httpAnswerOf(output), maxBodyBytes);
        });
      }
      const service = awsService(resource.service);
      const context: ErrorContext = {
        prefix: service.errorName,
        serviceLabel: service.errorName,
        envKey: service.envKey,
        endpoint: clients.endpoint(service),
      };
      return call(request, resource, service, context, async (signal) => {
        const name = commandName(resource.action);
        const Command = await clients.command(service, name);
        if (!Command) {
          throw new TaskError(
            "States.Runtime",
            `${service.pkg} has no ${name}: '${resource.action}' is not an action of ${service.id} (actions are camelCase API names, like getObject)`,
          );
        }
        const client = await clients.client(service, resource.region);
        const output = await client.send(new Command({ ...args }), { abortSignal: signal });
        return outputJson(output, maxBodyBytes);
      });
    },
  };
}

function parameters(input: Json, resource: string): JsonObject {
  if (input === null || input === undefined) return {};
  if (!isJsonObject(input)) {
    throw new TaskError(
      "States.Runtime",
      `${resource}: Parameters must be a JSON object of the API's request fields`,
    );
  }
  return input;
}
