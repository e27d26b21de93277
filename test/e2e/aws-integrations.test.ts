import { CreateTableCommand, DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startDynalite,
  startFakeAws,
  startS3rver,
  type Endpoint,
  type FakeAws,
} from "../task-runners/aws/servers.js";
import { exited, spawnBin } from "./processes.js";
import { REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * AWS service integrations through the binary (issue 38): definitions as AWS's
 * developer guide writes them (DynamoDB PutItem then GetItem, a Lambda invoke with
 * `Payload.$`, an S3 PutObject through `aws-sdk:s3:putObject`) run unchanged with
 * only the region, credentials and endpoint overrides in the service's environment.
 * DynamoDB is dynalite, S3 is s3rver, Lambda is an Invoke API on loopback; the test
 * reads what the services really hold through its own SDK clients.
 */
const REGION = "us-west-2";
const CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

let dynamo: Endpoint;
let s3: Endpoint;
let fake: FakeAws;
let stack: Stack;
let dynamoClient: DynamoDBClient;
let s3Client: S3Client;

beforeAll(async () => {
  [dynamo, s3, fake] = await Promise.all([startDynalite(), startS3rver(), startFakeAws()]);
  dynamoClient = new DynamoDBClient({
    region: REGION,
    endpoint: dynamo.endpoint,
    credentials: CREDENTIALS,
  });
  s3Client = new S3Client({
    region: REGION,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: CREDENTIALS,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  await dynamoClient.send(
    new CreateTableCommand({
      TableName: "MyTable",
      AttributeDefinitions: [{ AttributeName: "MessageId", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "MessageId", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
  await s3Client.send(new CreateBucketCommand({ Bucket: "my-bucket" }));
  stack = await startStack({
    egressAllow: "127.0.0.1",
    env: {
      STEPWISE_AWS_REGION: REGION,
      STEPWISE_AWS_ENDPOINT_DYNAMODB: dynamo.endpoint,
      STEPWISE_AWS_ENDPOINT_S3: s3.endpoint,
      STEPWISE_AWS_ENDPOINT_LAMBDA: fake.endpoint,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AWS_EC2_METADATA_DISABLED: "true",
    },
  });
});
afterAll(async () => {
  await stack?.close();
  dynamoClient?.destroy();
  s3Client?.destroy();
  await Promise.all([dynamo?.close(), s3?.close(), fake?.close()]);
});

describe("a definition written for AWS runs unchanged against the configured endpoints", () => {
  it("DynamoDB putItem then getItem, a Lambda invoke with Payload.$, an S3 putObject", async () => {
    fake.functions.set("HelloFunction", (payload) => {
      const input = JSON.parse(payload) as { MessageId: string };
      return { payload: JSON.stringify({ greeting: `hello ${input.MessageId}` }) };
    });
    const definition = {
      Comment: "AWS's examples, one after the other",
      StartAt: "Put item",
      States: {
        "Put item": {
          Type: "Task",
          Resource: "arn:aws:states:::dynamodb:putItem",
          Parameters: {
            TableName: "MyTable",
            Item: { MessageId: { "S.$": "$.MessageId" }, Body: { S: "Hello" } },
          },
          ResultPath: "$.put",
          Next: "Read next Message from DynamoDB",
        },
        "Read next Message from DynamoDB": {
          Type: "Task",
          Resource: "arn:aws:states:::dynamodb:getItem",
          Parameters: { TableName: "MyTable", Key: { MessageId: { "S.$": "$.MessageId" } } },
          ResultPath: "$.DynamoDB",
          Next: "Call Lambda",
        },
        "Call Lambda": {
          Type: "Task",
          Resource: "arn:aws:states:::lambda:invoke",
          Parameters: {
            FunctionName: "arn:aws:lambda:us-west-2:123456789012:function:HelloFunction",
            "Payload.$": "$",
          },
          ResultSelector: { "Payload.$": "$.Payload", "StatusCode.$": "$.StatusCode" },
          ResultPath: "$.lambda",
          Next: "Save to S3",
        },
        "Save to S3": {
          Type: "Task",
          Resource: "arn:aws:states:::aws-sdk:s3:putObject",
          Parameters: {
            Bucket: "my-bucket",
            "Key.$": "States.Format('messages/{}.json', $.MessageId)",
            "Body.$": "States.JsonToString($.lambda.Payload)",
          },
          ResultPath: "$.s3",
          End: true,
        },
      },
    };
    const created = await stack.client.post("/v1/state-machines", {
      name: "aws-examples",
      definition,
    });
    expect(created.status).toBe(201);
    const run = await stack.client.post("/v1/state-machines/aws-examples/executions?wait=60", {
      input: { MessageId: "m-1" },
    });
    expect(run.body).toMatchObject({ status: "SUCCEEDED" });
    const output = run.body.output;
    expect(output.put).toMatchObject({
      SdkHttpMetadata: { HttpStatusCode: 200 },
      SdkResponseMetadata: { RequestId: expect.any(String) },
    });
    expect(output.DynamoDB).toMatchObject({
      Item: { MessageId: { S: "m-1" }, Body: { S: "Hello" } },
    });
    expect(output.lambda).toEqual({ Payload: { greeting: "hello m-1" }, StatusCode: 200 });
    expect(output.s3).toMatchObject({ ETag: expect.any(String) });

    // What the services really hold.
    const item = await dynamoClient.send(
      new GetItemCommand({ TableName: "MyTable", Key: { MessageId: { S: "m-1" } } }),
    );
    expect(item.Item).toEqual({ MessageId: { S: "m-1" }, Body: { S: "Hello" } });
    const object = await s3Client.send(
      new GetObjectCommand({ Bucket: "my-bucket", Key: "messages/m-1.json" }),
    );
    expect(JSON.parse(await object.Body!.transformToString())).toEqual({
      greeting: "hello m-1",
    });
    // The Lambda got the state's input as its payload, signed for the configured region.
    const invoked = fake.requests.find((r) => r.path.includes("HelloFunction"))!;
    expect(JSON.parse(invoked.body)).toMatchObject({ MessageId: "m-1" });
    expect(invoked.headers.authorization).toMatch(/\/us-west-2\/lambda\/aws4_request/);

    // The history names these tasks as AWS does.
    const history = await stack.client.get(
      `/v1/executions/${encodeURIComponent(run.body.executionId)}/history?limit=100`,
    );
    type Scheduled = { type: string; taskScheduledEventDetails: Record<string, unknown> };
    const scheduled = (history.body.items as Scheduled[])
      .filter((e) => e.type === "TaskScheduled")
      .map(({ taskScheduledEventDetails: d }) => [d.resourceType, d.resource, d.region]);
    expect(scheduled).toEqual([
      ["dynamodb", "putItem", REGION],
      ["dynamodb", "getItem", REGION],
      ["lambda", "invoke", REGION],
      ["aws-sdk:s3", "putObject", REGION],
    ]);
  });

  it("a Lambda function error is caught by its errorType, the error document as Cause", async () => {
    fake.functions.set("RejectOrder", () => ({
      functionError: "Unhandled",
      payload: JSON.stringify({ errorType: "OrderRejected", errorMessage: "out of stock" }),
    }));
    const created = await stack.client.post("/v1/state-machines", {
      name: "aws-lambda-catch",
      definition: {
        StartAt: "Invoke",
        States: {
          Invoke: {
            Type: "Task",
            Resource: "arn:aws:states:::lambda:invoke",
            Parameters: { FunctionName: "RejectOrder", "Payload.$": "$" },
            Catch: [{ ErrorEquals: ["OrderRejected"], ResultPath: "$.error", Next: "Rejected" }],
            End: true,
          },
          Rejected: {
            Type: "Pass",
            Parameters: {
              "error.$": "$.error.Error",
              "message.$": "States.StringToJson($.error.Cause)",
            },
            End: true,
          },
        },
      },
    });
    expect(created.status).toBe(201);
    const run = await stack.client.post("/v1/state-machines/aws-lambda-catch/executions?wait=60", {
      input: { order: "o-9" },
    });
    expect(run.body).toMatchObject({
      status: "SUCCEEDED",
      output: {
        error: "OrderRejected",
        message: { errorType: "OrderRejected", errorMessage: "out of stock" },
      },
    });
  });

  it("lambda:invoke.waitForTaskToken sends the token in the payload, then waits for its answer", async () => {
    let received: (token: string) => void;
    const token = new Promise<string>((resolve) => (received = resolve));
    fake.functions.set("AskHuman", (payload) => {
      received((JSON.parse(payload) as { token: string }).token);
      return { payload: "", status: 202 };
    });
    const created = await stack.client.post("/v1/state-machines", {
      name: "aws-callback",
      definition: {
        StartAt: "Ask",
        States: {
          Ask: {
            Type: "Task",
            Resource: "arn:aws:states:::lambda:invoke.waitForTaskToken",
            Parameters: {
              FunctionName: "AskHuman",
              InvocationType: "Event",
              Payload: { "token.$": "$$.Task.Token", "question.$": "$.question" },
            },
            End: true,
          },
        },
      },
    });
    expect(created.status).toBe(201);
    const started = await stack.client.post("/v1/state-machines/aws-callback/executions", {
      input: { question: "ship it?" },
    });
    expect(started.status).toBe(201);
    const answered = await stack.client.post(
      `/v1/task-tokens/${encodeURIComponent(await token)}/success`,
      { output: { answer: "yes" } },
    );
    expect(answered.status).toBe(200);
    const id = encodeURIComponent(started.body.executionId);
    const done = await stack.client.until(async () => {
      const r = await stack.client.get(`/v1/executions/${id}`);
      return r.body.status === "RUNNING" ? undefined : r.body;
    }, 30_000);
    expect(done).toMatchObject({ status: "SUCCEEDED", output: { answer: "yes" } });
  });
});

describe("a malformed endpoint override", () => {
  it("stops the binary with exit 2 and one line naming the variable", async () => {
    const run = spawnBin(["serve"], {
      env: { REDIS_URL, STEPWISE_AWS_ENDPOINT_DYNAMODB: "localhost:8000" },
    });
    const code = await exited(run.child, 20_000);
    const output = run.output().trim();
    expect({ code, output }).toMatchObject({ code: 2 });
    expect(output.split("\n")).toHaveLength(1);
    expect(output).toContain(
      "STEPWISE_AWS_ENDPOINT_DYNAMODB='localhost:8000': expected an http(s) URL",
    );
  });
});
