import type { Json, JsonObject } from "../../engine/core/json.js";
import { isJsonObject } from "../../engine/core/json.js";
import { TaskError, type TaskRequest } from "../runner.js";
import type { HttpAnswer } from "./clients.js";
import { invokeInput, invokeResult } from "./lambda.js";
import { sdkMetadata } from "./metadata.js";
import { jsonText, outputJson } from "./values.js";

/**
 * AWS's optimized integrations, one row each: the SDK command, how Parameters
 * become its input, how its output becomes the result, and the prefix of its error
 * names. Request and result shapes follow AWS's developer guide, "Integrating
 * services with Step Functions":
 *  - Lambda, "Invoke an AWS Lambda function" (connect-lambda.html): lambda.ts;
 *  - DynamoDB, "Call DynamoDB with Step Functions" (connect-ddb.html): GetItem,
 *    PutItem, UpdateItem, DeleteItem with DynamoDB's typed attribute values in and
 *    out (`{"S": "…"}`), errors `DynamoDB.<Exception>`
 *    (`DynamoDB.ConditionalCheckFailedException`);
 *  - SQS, "Send messages to an Amazon SQS queue" (connect-sqs.html): SendMessage,
 *    a `MessageBody` that is not a string sent as its JSON text; result
 *    `MD5OfMessageBody`, `MessageId`; errors `SQS.<Exception>`;
 *  - SNS, "Publish messages to an Amazon SNS topic" (connect-sns.html): Publish, a
 *    `Message` that is not a string sent as JSON text; result `MessageId`;
 *  - EventBridge, "Add EventBridge events" (connect-eventbridge.html): PutEvents, each
 *    entry's `Detail` object sent as JSON text and the state machine's and
 *    execution's ARNs added to its `Resources`; result `Entries`,
 *    `FailedEntryCount`; a failed entry fails the task with `EventBridge.FailedEntry`.
 * Lambda, DynamoDB, SQS and SNS results carry `SdkHttpMetadata` and
 * `SdkResponseMetadata` as AWS's do (metadata.ts); EventBridge's do not.
 */
export interface Integration {
  /** The SDK service id (services.ts). */
  sdkService: string;
  command: string;
  /** The prefix of its error names, and the service as causes name it. */
  prefix: string;
  serviceLabel: string;
  input(args: JsonObject, request: TaskRequest): Record<string, unknown>;
  result(output: unknown, answer: HttpAnswer | undefined, maxBodyBytes: number): Promise<Json>;
}

/** The output as JSON, with AWS's response metadata. */
async function withMetadata(
  output: unknown,
  answer: HttpAnswer | undefined,
  maxBodyBytes: number,
): Promise<Json> {
  const json = (await outputJson(output, maxBodyBytes)) as JsonObject;
  const requestId = (output as { $metadata?: { requestId?: string } }).$metadata?.requestId;
  return { ...json, ...sdkMetadata(answer, requestId) };
}

function needParam(args: JsonObject, name: string, integration: string): void {
  if (args[name] === undefined) {
    throw new TaskError("States.Runtime", `${integration} needs ${name} in its Parameters`);
  }
}

function dynamodb(command: string, needs: string): Integration {
  return {
    sdkService: "dynamodb",
    command,
    prefix: "DynamoDB",
    serviceLabel: "AmazonDynamoDBv2",
    input(args) {
      needParam(args, "TableName", `dynamodb:${command}`);
      needParam(args, needs, `dynamodb:${command}`);
      return { ...args };
    },
    result: withMetadata,
  };
}

const SQS: Integration = {
  sdkService: "sqs",
  command: "SendMessageCommand",
  prefix: "SQS",
  serviceLabel: "AmazonSQS",
  input(args) {
    needParam(args, "QueueUrl", "sqs:sendMessage");
    needParam(args, "MessageBody", "sqs:sendMessage");
    return { ...args, MessageBody: jsonText(args.MessageBody) };
  },
  result: withMetadata,
};

const SNS: Integration = {
  sdkService: "sns",
  command: "PublishCommand",
  prefix: "SNS",
  serviceLabel: "AmazonSNS",
  input(args) {
    needParam(args, "Message", "sns:publish");
    return { ...args, Message: jsonText(args.Message) };
  },
  result: withMetadata,
};

const LAMBDA: Integration = {
  sdkService: "lambda",
  command: "InvokeCommand",
  prefix: "Lambda",
  serviceLabel: "AWSLambda",
  input: (args) => invokeInput(args),
  result: async (output, answer) => invokeResult(output, answer),
};

const EVENTS: Integration = {
  sdkService: "eventbridge",
  command: "PutEventsCommand",
  prefix: "EventBridge",
  serviceLabel: "AmazonEventBridge",
  input(args, request) {
    if (!Array.isArray(args.Entries)) {
      throw new TaskError("States.Runtime", "events:putEvents needs an Entries array");
    }
    const execution = request.executionId.replace(/\/.*$/, "");
    const machine = stateMachineOf(execution);
    const entries = args.Entries.map((entry) => {
      if (!isJsonObject(entry)) return entry;
      const resources = Array.isArray(entry.Resources) ? entry.Resources : [];
      return {
        ...entry,
        ...(entry.Detail !== undefined ? { Detail: jsonText(entry.Detail) } : {}),
        Resources: [...resources, ...(machine ? [machine] : []), execution],
      };
    });
    return { ...args, Entries: entries };
  },
  async result(output, _answer, maxBodyBytes) {
    const json = (await outputJson(output, maxBodyBytes)) as JsonObject;
    if (typeof json.FailedEntryCount === "number" && json.FailedEntryCount > 0) {
      throw new TaskError("EventBridge.FailedEntry", JSON.stringify(json));
    }
    return json;
  },
};

/** `arn:…:execution:<machine>:<name>` → `arn:…:stateMachine:<machine>`. */
function stateMachineOf(executionArn: string): string | undefined {
  const m = /^(arn:[^:]+:states:[^:]*:[^:]*:)execution:([^:]+):[^:]+$/.exec(executionArn);
  return m ? `${m[1]}stateMachine:${m[2]}` : undefined;
}

export const INTEGRATIONS: Readonly<Record<string, Readonly<Record<string, Integration>>>> = {
  lambda: { invoke: LAMBDA },
  sqs: { sendMessage: SQS },
  sns: { publish: SNS },
  dynamodb: {
    getItem: dynamodb("GetItemCommand", "Key"),
    putItem: dynamodb("PutItemCommand", "Item"),
    updateItem: dynamodb("UpdateItemCommand", "Key"),
    deleteItem: dynamodb("DeleteItemCommand", "Key"),
  },
  events: { putEvents: EVENTS },
};
