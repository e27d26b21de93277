import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../../engine/core/json.js";
import { awsRunner, type AwsRunner } from "../../../task-runners/aws/index.js";
import { parseEgressAllow } from "../../../task-runners/egress.js";
import { defaultRunners, servedBy } from "../../../task-runners/index.js";
import { TaskError, type TaskRequest } from "../../../task-runners/runner.js";
import { ROOT } from "../../e2e/processes.js";
import {
  startDynalite,
  startFakeAws,
  startS3rver,
  type Endpoint,
  type FakeAws,
} from "./servers.js";

/**
 * The AWS runner against real servers on loopback ports, through the real AWS SDK
 * clients: DynamoDB (dynalite), S3 (s3rver), and Lambda, SQS, SNS and EventBridge
 * through a server that answers their APIs as documented and records each request.
 * One of each for the file; each test its own table, bucket, function or queue.
 */
const CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };
const EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:orders:run-1";

let dynamo: Endpoint;
let s3: Endpoint;
let fake: FakeAws;
let runner: AwsRunner;

beforeAll(async () => {
  [dynamo, s3, fake] = await Promise.all([startDynalite(), startS3rver(), startFakeAws()]);
  runner = awsRunner({
    region: "us-east-1",
    credentials: CREDENTIALS,
    egress: parseEgressAllow("127.0.0.1"),
    endpoints: {
      DYNAMODB: dynamo.endpoint,
      S3: s3.endpoint,
      LAMBDA: fake.endpoint,
      SQS: fake.endpoint,
      SNS: fake.endpoint,
      EVENTBRIDGE: fake.endpoint,
    },
  });
});
afterAll(async () => {
  runner?.close();
  await Promise.all([dynamo?.close(), s3?.close(), fake?.close()]);
});

function request(resource: string, input: Json, more: Partial<TaskRequest> = {}): TaskRequest {
  return {
    resource,
    stateName: "Call",
    taskId: `${EXECUTION}#1`,
    operationKey: "op-1",
    executionId: EXECUTION,
    attempt: 0,
    input,
    signal: new AbortController().signal,
    ...more,
  };
}

async function failure(promise: Promise<unknown>): Promise<TaskError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof TaskError) return err;
    throw err;
  }
  throw new Error("the task succeeded");
}

const unique = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;
const sdk = (service: string, action: string) => `arn:aws:states:::aws-sdk:${service}:${action}`;

describe("which resources the runner serves", () => {
  it("the optimized integrations and aws-sdk, with .waitForTaskToken but not .sync", () => {
    for (const resource of [
      "arn:aws:states:::lambda:invoke",
      "arn:aws:states:::lambda:invoke.waitForTaskToken",
      "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
      "arn:aws:states:::sns:publish",
      "arn:aws:states:::dynamodb:getItem",
      "arn:aws:states:::dynamodb:putItem",
      "arn:aws:states:::dynamodb:updateItem",
      "arn:aws:states:::dynamodb:deleteItem",
      "arn:aws:states:::events:putEvents",
      "arn:aws:states:eu-west-1::lambda:invoke",
      "arn:aws:states:::aws-sdk:s3:getObject",
      "arn:aws:states:::aws-sdk:dynamodb:query.waitForTaskToken",
    ]) {
      expect(runner.handles(resource), resource).toBe(true);
    }
    for (const resource of [
      "arn:aws:states:::lambda:invoke.sync",
      "arn:aws:states:::dynamodb:query",
      "arn:aws:states:::http:invoke",
      "arn:aws:states:::stepwise:approval",
      "arn:aws:states:::aws-sdk:s3",
      "arn:aws:states:::lambda:toString",
      "arn:aws:states:::constructor:name",
      "function:invoke",
    ]) {
      expect(runner.handles(resource), resource).toBe(false);
    }
    const serves = servedBy(defaultRunners());
    expect(serves("arn:aws:states:::sqs:sendMessage")).toBe(true);
    expect(serves("arn:aws:states:::aws-sdk:secretsmanager:getSecretValue")).toBe(true);
  });
});

describe("DynamoDB through dynalite", () => {
  it("putItem, getItem, updateItem, deleteItem with typed values; query through aws-sdk", async () => {
    const table = unique("orders");
    await runner.run(
      request(sdk("dynamodb", "createTable"), {
        TableName: table,
        AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
    const put = (await runner.run(
      request("arn:aws:states:::dynamodb:putItem", {
        TableName: table,
        Item: { id: { S: "o-1" }, total: { N: "42" }, tags: { SS: ["a", "b"] } },
      }),
    )) as Record<string, Json>;
    expect(put).toMatchObject({
      SdkHttpMetadata: { HttpStatusCode: 200 },
      SdkResponseMetadata: { RequestId: expect.any(String) },
    });

    const got = await runner.run(
      request("arn:aws:states:::dynamodb:getItem", { TableName: table, Key: { id: { S: "o-1" } } }),
    );
    expect(got).toMatchObject({
      Item: { id: { S: "o-1" }, total: { N: "42" }, tags: { SS: ["a", "b"] } },
      SdkHttpMetadata: { HttpStatusCode: 200, HttpHeaders: expect.any(Object) },
    });

    const updated = await runner.run(
      request("arn:aws:states:::dynamodb:updateItem", {
        TableName: table,
        Key: { id: { S: "o-1" } },
        UpdateExpression: "SET #s = :s",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ":s": { S: "shipped" } },
        ReturnValues: "ALL_NEW",
      }),
    );
    expect(updated).toMatchObject({ Attributes: { status: { S: "shipped" } } });

    const queried = await runner.run(
      request(sdk("dynamodb", "query"), {
        TableName: table,
        KeyConditionExpression: "id = :id",
        ExpressionAttributeValues: { ":id": { S: "o-1" } },
      }),
    );
    expect(queried).toMatchObject({ Count: 1, Items: [{ status: { S: "shipped" } }] });
    // aws-sdk results are the API's, without the optimized integrations' metadata.
    expect(queried).not.toHaveProperty("SdkHttpMetadata");

    await runner.run(
      request("arn:aws:states:::dynamodb:deleteItem", {
        TableName: table,
        Key: { id: { S: "o-1" } },
      }),
    );
    const gone = await runner.run(
      request("arn:aws:states:::dynamodb:getItem", { TableName: table, Key: { id: { S: "o-1" } } }),
    );
    expect(gone).not.toHaveProperty("Item");
  });

  it("names service errors as AWS does: DynamoDB.<Exception>, DynamoDb.<Exception> for aws-sdk", async () => {
    const table = unique("conditional");
    await runner.run(
      request(sdk("dynamodb", "createTable"), {
        TableName: table,
        AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
    const item = { TableName: table, Item: { id: { S: "x" } } };
    await runner.run(request("arn:aws:states:::dynamodb:putItem", item));
    const conditional = { ...item, ConditionExpression: "attribute_not_exists(id)" };
    const optimized = await failure(
      runner.run(request("arn:aws:states:::dynamodb:putItem", conditional)),
    );
    expect(optimized.error).toBe("DynamoDB.ConditionalCheckFailedException");
    expect(optimized.cause).toMatch(
      /\(Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ConditionalCheckFailedException; Request ID: /,
    );
    const generic = await failure(runner.run(request(sdk("dynamodb", "putItem"), conditional)));
    expect(generic.error).toBe("DynamoDb.ConditionalCheckFailedException");

    const missing = await failure(
      runner.run(
        request("arn:aws:states:::dynamodb:getItem", {
          TableName: unique("no-such-table"),
          Key: { id: { S: "x" } },
        }),
      ),
    );
    expect(missing.error).toBe("DynamoDB.ResourceNotFoundException");
  });
});

describe("S3 through s3rver (aws-sdk:s3)", () => {
  it("createBucket, putObject, getObject; a missing key is S3.NoSuchKeyException", async () => {
    const bucket = unique("bucket");
    await runner.run(request(sdk("s3", "createBucket"), { Bucket: bucket }));
    const put = await runner.run(
      request(sdk("s3", "putObject"), {
        Bucket: bucket,
        Key: "orders/o-1.json",
        Body: '{"id":"o-1"}',
        ContentType: "application/json",
      }),
    );
    expect(put).toMatchObject({ ETag: expect.any(String) });
    const got = await runner.run(
      request(sdk("s3", "getObject"), { Bucket: bucket, Key: "orders/o-1.json" }),
    );
    expect(got).toMatchObject({
      Body: '{"id":"o-1"}',
      ContentType: "application/json",
      ContentLength: 12,
      LastModified: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const missing = await failure(
      runner.run(request(sdk("s3", "getObject"), { Bucket: bucket, Key: "nothing" })),
    );
    expect(missing.error).toBe("S3.NoSuchKeyException");
    expect(missing.cause).toMatch(/Status Code: 404/);
  });
});

describe("Lambda through an Invoke API on loopback", () => {
  it("invokes with Payload as JSON and returns AWS's result shape", async () => {
    const name = unique("greet");
    fake.functions.set(name, (payload) => ({
      payload: JSON.stringify({ hello: (JSON.parse(payload) as { who: string }).who }),
    }));
    const result = await runner.run(
      request("arn:aws:states:::lambda:invoke", {
        FunctionName: `arn:aws:lambda:us-east-1:123456789012:function:${name}`,
        Payload: { who: "ada" },
      }),
    );
    expect(result).toMatchObject({
      ExecutedVersion: "$LATEST",
      Payload: { hello: "ada" },
      SdkHttpMetadata: {
        AllHttpHeaders: { "x-amz-executed-version": ["$LATEST"] },
        HttpHeaders: { "x-amz-executed-version": "$LATEST" },
        HttpStatusCode: 200,
      },
      SdkResponseMetadata: { RequestId: expect.any(String) },
      StatusCode: 200,
    });
    const sent = fake.requests.find((r) => r.path.includes(encodeURIComponent(name)))!;
    expect(sent.method).toBe("POST");
    expect(sent.path).toMatch(/^\/2015-03-31\/functions\/.+\/invocations$/);
    expect(JSON.parse(sent.body)).toEqual({ who: "ada" });
    expect(sent.headers.authorization).toMatch(/\/us-east-1\/lambda\/aws4_request/);
  });

  it("a Payload that is not JSON stays a string", async () => {
    const name = unique("plain");
    fake.functions.set(name, () => ({ payload: "just text" }));
    const result = await runner.run(
      request("arn:aws:states:::lambda:invoke", { FunctionName: name }),
    );
    expect(result).toMatchObject({ Payload: "just text", StatusCode: 200 });
  });

  it("a function error is named by its errorType, the error document as the cause", async () => {
    const name = unique("fails");
    const document = {
      errorType: "OrderRejected",
      errorMessage: "out of stock",
      trace: ["at handler"],
    };
    fake.functions.set(name, () => ({
      functionError: "Unhandled",
      payload: JSON.stringify(document),
    }));
    const err = await failure(
      runner.run(request("arn:aws:states:::lambda:invoke", { FunctionName: name, Payload: {} })),
    );
    expect(err.error).toBe("OrderRejected");
    expect(JSON.parse(err.cause)).toEqual(document);
  });

  it("a function error without an error document is Lambda.Unknown", async () => {
    const name = unique("crashes");
    fake.functions.set(name, () => ({ functionError: "Unhandled", payload: "" }));
    const err = await failure(
      runner.run(request("arn:aws:states:::lambda:invoke", { FunctionName: name })),
    );
    expect(err.error).toBe("Lambda.Unknown");
  });

  it("a service exception is Lambda.<Exception>", async () => {
    const err = await failure(
      runner.run(
        request("arn:aws:states:::lambda:invoke", { FunctionName: unique("does-not-exist") }),
      ),
    );
    expect(err.error).toBe("Lambda.ResourceNotFoundException");
    expect(err.cause).toMatch(/Function not found.*\(Service: AWSLambda; Status Code: 404/);
  });

  it("calls the resource's own region", async () => {
    const name = unique("regional");
    fake.functions.set(name, () => ({ payload: "{}" }));
    await runner.run(request("arn:aws:states:eu-west-1::lambda:invoke", { FunctionName: name }));
    const sent = fake.requests.find((r) => r.path.includes(encodeURIComponent(name)))!;
    expect(sent.headers.authorization).toMatch(/\/eu-west-1\/lambda\/aws4_request/);
  });
});

describe("the region a call goes to", () => {
  it("without STEPWISE_AWS_REGION: the SDK's (AWS_REGION), else us-east-1", async () => {
    const saved = { ...process.env };
    const name = unique("where");
    fake.functions.set(name, () => ({ payload: "{}" }));
    const signedFor = async (env: Record<string, string>) => {
      for (const key of Object.keys(process.env))
        if (key.startsWith("AWS_")) delete process.env[key];
      Object.assign(process.env, { AWS_CONFIG_FILE: "/nonexistent/stepwise/config", ...env });
      const chained = awsRunner({
        credentials: CREDENTIALS,
        egress: parseEgressAllow("127.0.0.1"),
        endpoints: { LAMBDA: fake.endpoint },
      });
      try {
        const before = fake.requests.length;
        await chained.run(request("arn:aws:states:::lambda:invoke", { FunctionName: name }));
        const sent = fake.requests.slice(before).find((r) => r.path.includes(name))!;
        return /\/([a-z0-9-]+)\/lambda\/aws4_request/.exec(String(sent.headers.authorization))?.[1];
      } finally {
        chained.close();
      }
    };
    try {
      expect(await signedFor({ AWS_REGION: "ap-south-1" })).toBe("ap-south-1");
      expect(await signedFor({})).toBe("us-east-1");
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });
});

describe("SQS, SNS and EventBridge through endpoints that record what they get", () => {
  it("sqs:sendMessage sends a JSON MessageBody as text and returns MessageId, MD5OfMessageBody", async () => {
    const queue = `${fake.endpoint}/123456789012/${unique("queue")}`;
    fake.queues.add(queue);
    const result = await runner.run(
      request("arn:aws:states:::sqs:sendMessage.waitForTaskToken", {
        QueueUrl: queue,
        MessageBody: { order: "o-1", token: "tok-123" },
      }),
    );
    expect(result).toMatchObject({
      MD5OfMessageBody: expect.stringMatching(/^[0-9a-f]{32}$/),
      MessageId: expect.any(String),
      SdkHttpMetadata: { HttpStatusCode: 200 },
    });
    const sent = fake.requests.find((r) => r.body.includes(queue))!;
    expect(sent.headers["x-amz-target"]).toBe("AmazonSQS.SendMessage");
    expect(JSON.parse(sent.body)).toEqual({
      QueueUrl: queue,
      MessageBody: '{"order":"o-1","token":"tok-123"}',
    });
  });

  it("a queue that does not exist is SQS.QueueDoesNotExistException", async () => {
    const err = await failure(
      runner.run(
        request("arn:aws:states:::sqs:sendMessage", {
          QueueUrl: `${fake.endpoint}/123456789012/${unique("missing")}`,
          MessageBody: "hi",
        }),
      ),
    );
    expect(err.error).toBe("SQS.QueueDoesNotExistException");
  });

  it("sns:publish sends Publish with the Message as JSON text and returns MessageId", async () => {
    const topic = `arn:aws:sns:us-east-1:123456789012:${unique("topic")}`;
    const result = await runner.run(
      request("arn:aws:states:::sns:publish", { TopicArn: topic, Message: { shipped: true } }),
    );
    expect(result).toMatchObject({ MessageId: expect.any(String), SdkHttpMetadata: {} });
    const sent = fake.requests.find((r) => r.body.includes(encodeURIComponent(topic)))!;
    const form = new URLSearchParams(sent.body);
    expect(form.get("Action")).toBe("Publish");
    expect(form.get("TopicArn")).toBe(topic);
    expect(form.get("Message")).toBe('{"shipped":true}');
  });

  it("events:putEvents sends Detail as text, adds the machine and execution to Resources", async () => {
    const source = unique("orders.app");
    const result = await runner.run(
      request("arn:aws:states:::events:putEvents", {
        Entries: [{ Source: source, DetailType: "OrderShipped", Detail: { id: "o-1" } }],
      }),
    );
    expect(result).toEqual({ Entries: [{ EventId: expect.any(String) }], FailedEntryCount: 0 });
    const sent = fake.requests.find((r) => r.body.includes(source))!;
    expect(sent.headers["x-amz-target"]).toBe("AWSEvents.PutEvents");
    expect(JSON.parse(sent.body)).toEqual({
      Entries: [
        {
          Source: source,
          DetailType: "OrderShipped",
          Detail: '{"id":"o-1"}',
          Resources: ["arn:aws:states:us-east-1:123456789012:stateMachine:orders", EXECUTION],
        },
      ],
    });
    const failed = await failure(
      runner.run(
        request("arn:aws:states:::events:putEvents", {
          Entries: [{ Source: "fail", DetailType: "x", Detail: "{}" }],
        }),
      ),
    );
    expect(failed.error).toBe("EventBridge.FailedEntry");
    expect(JSON.parse(failed.cause)).toMatchObject({ FailedEntryCount: 1 });
  });
});

describe("failures end the task with AWS's name and a cause to act on", () => {
  it("a client package that is not installed names the package", async () => {
    const err = await failure(
      runner.run(request(sdk("kinesisvideoarchivedmedia", "getClip"), { StreamName: "s" })),
    );
    expect(err.error).toBe("States.TaskFailed");
    expect(err.cause).toContain("npm install @aws-sdk/client-kinesis-video-archived-media");
  });

  it("an action the client does not have is States.Runtime", async () => {
    const err = await failure(runner.run(request(sdk("s3", "fetchEverything"), {})));
    expect(err.error).toBe("States.Runtime");
    expect(err.cause).toContain("FetchEverythingCommand");
  });

  it("an endpoint the egress policy refuses is never called", async () => {
    const closed = awsRunner({
      region: "us-east-1",
      credentials: CREDENTIALS,
      endpoints: { LAMBDA: fake.endpoint },
    });
    try {
      const before = fake.requests.length;
      const err = await failure(
        closed.run(request("arn:aws:states:::lambda:invoke", { FunctionName: "f" })),
      );
      expect(err.error).toBe("Lambda.SdkClientException");
      expect(err.cause).toMatch(/refused by the egress policy; STEPWISE_EGRESS_ALLOW opens/);
      expect(fake.requests.length).toBe(before);
    } finally {
      closed.close();
    }
  });

  it("a host name that resolves to loopback is refused after DNS resolution", async () => {
    const closed = awsRunner({
      region: "us-east-1",
      credentials: CREDENTIALS,
      endpoints: { LAMBDA: fake.endpoint.replace("127.0.0.1", "localhost") },
    });
    try {
      const before = fake.requests.length;
      const err = await failure(
        closed.run(request("arn:aws:states:::lambda:invoke", { FunctionName: "f" })),
      );
      expect(err.error).toBe("Lambda.SdkClientException");
      expect(err.cause).toMatch(/localhost resolves to .*refused by the egress policy/);
      expect(fake.requests.length).toBe(before);
    } finally {
      closed.close();
    }
  });

  it("an endpoint that does not answer is <Service>.SdkClientException naming it", async () => {
    const port = await closedPort();
    const down = awsRunner({
      region: "us-east-1",
      credentials: CREDENTIALS,
      egress: parseEgressAllow("127.0.0.1"),
      endpoints: { DYNAMODB: `http://127.0.0.1:${port}` },
    });
    try {
      const err = await failure(
        down.run(
          request("arn:aws:states:::dynamodb:getItem", { TableName: "t", Key: { id: { S: "x" } } }),
        ),
      );
      expect(err.error).toBe("DynamoDB.SdkClientException");
      expect(err.cause).toContain(`http://127.0.0.1:${port} (STEPWISE_AWS_ENDPOINT_DYNAMODB)`);
    } finally {
      down.close();
    }
  });

  it("no credentials anywhere in the chain is <Service>.SdkClientException saying how to give them", async () => {
    const saved = { ...process.env };
    for (const name of Object.keys(process.env)) {
      if (name.startsWith("AWS_")) delete process.env[name];
    }
    process.env.AWS_EC2_METADATA_DISABLED = "true";
    process.env.AWS_CONFIG_FILE = "/nonexistent/stepwise/config";
    process.env.AWS_SHARED_CREDENTIALS_FILE = "/nonexistent/stepwise/credentials";
    const anonymous = awsRunner({
      region: "us-east-1",
      egress: parseEgressAllow("127.0.0.1"),
      endpoints: { SNS: fake.endpoint },
    });
    try {
      const err = await failure(
        anonymous.run(
          request("arn:aws:states:::sns:publish", {
            TopicArn: "arn:aws:sns:us-east-1:123456789012:t",
            Message: "m",
          }),
        ),
      );
      expect(err.error).toBe("SNS.SdkClientException");
      expect(err.cause).toMatch(/Unable to load AWS credentials.*AWS_ACCESS_KEY_ID/);
    } finally {
      anonymous.close();
      for (const name of Object.keys(process.env)) {
        if (!(name in saved)) delete process.env[name];
      }
      Object.assign(process.env, saved);
    }
  });

  it("loading the SDK prints no NodeVersionSupportWarning (a fresh process)", async () => {
    const script = `
      import { awsRunner } from "./task-runners/aws/index.ts";
      import { parseEgressAllow } from "./task-runners/egress.ts";
      const runner = awsRunner({ region: "us-east-1", credentials: { accessKeyId: "a", secretAccessKey: "b" },
        egress: parseEgressAllow("127.0.0.1"), endpoints: { DYNAMODB: ${JSON.stringify(dynamo.endpoint)} } });
      const out = await runner.run({ resource: "arn:aws:states:::aws-sdk:dynamodb:listTables", stateName: "s",
        taskId: "t", operationKey: "o", executionId: "e", attempt: 0, input: {}, signal: new AbortController().signal });
      runner.close();
      console.log(JSON.stringify(out));
    `;
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { cwd: ROOT, env: { PATH: process.env.PATH } },
    );
    expect(JSON.parse(stdout)).toHaveProperty("TableNames");
    expect(stderr).not.toContain("NodeVersionSupportWarning");
  });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
