import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error dynalite ships no types
import dynalite from "dynalite";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";

/**
 * Real servers for the AWS runner's tests, each on a loopback port of its own:
 *  - DynamoDB: dynalite (DynamoDB's API on LevelDB, in memory);
 *  - S3: s3rver, file-backed in a fresh temporary folder (account S3RVER/S3RVER);
 *  - Lambda, SQS, SNS and EventBridge: one HTTP server that answers their APIs as
 *    the API references document them and records every request: Lambda's Invoke
 *    (`POST /2015-03-31/functions/{name}/invocations`, REST-JSON, a function error
 *    as `X-Amz-Function-Error: Unhandled` with the error document as the body), SQS
 *    SendMessage (AWS JSON 1.0, `X-Amz-Target: AmazonSQS.SendMessage`), SNS Publish
 *    (the Query protocol: a form body, an XML answer) and EventBridge PutEvents
 *    (AWS JSON 1.1, `X-Amz-Target: AWSEvents.PutEvents`).
 */
export interface Endpoint {
  endpoint: string;
  close(): Promise<void>;
}

export async function startDynalite(): Promise<Endpoint> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as Server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function startS3rver(): Promise<Endpoint> {
  const directory = await mkdtemp(join(tmpdir(), "stepwise-aws-s3-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory });
  const { port } = (await server.run()) as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** What a fake Lambda function answers: a result, or a function error (a document, or none). */
export type LambdaAnswer =
  | { payload: string; status?: number; version?: string }
  | { functionError: string; payload: string };

export interface FakeAws extends Endpoint {
  requests: Recorded[];
  /** Functions by name: what each answers to a payload. */
  functions: Map<string, (payload: string) => LambdaAnswer>;
  /** Queues that exist (their URLs); SendMessage to another is QueueDoesNotExist. */
  queues: Set<string>;
}

export async function startFakeAws(): Promise<FakeAws> {
  const requests: Recorded[] = [];
  const functions = new Map<string, (payload: string) => LambdaAnswer>();
  const queues = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "/";
      requests.push({ method: req.method ?? "", path, headers: req.headers, body });
      const requestId = randomUUID();
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, {
          "content-type": "application/x-amz-json-1.0",
          "x-amzn-requestid": requestId,
          ...headers,
        });
        res.end(JSON.stringify(value));
      };
      const invoke = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(path);
      if (invoke) {
        const name = decodeURIComponent(invoke[1]!);
        const fn = functions.get(name) ?? functions.get(name.replace(/^.*:function:/, ""));
        if (!fn) {
          res.writeHead(404, {
            "content-type": "application/json",
            "x-amzn-requestid": requestId,
            "x-amzn-errortype": "ResourceNotFoundException",
          });
          res.end(
            JSON.stringify({
              Type: "User",
              message: `Function not found: arn:aws:lambda:us-east-1:123456789012:function:${name}`,
            }),
          );
          return;
        }
        const answer = fn(body);
        const headers: Record<string, string> = {
          "content-type": "application/json",
          "x-amzn-requestid": requestId,
          "x-amz-executed-version": "version" in answer ? (answer.version ?? "$LATEST") : "$LATEST",
        };
        if ("functionError" in answer) headers["x-amz-function-error"] = answer.functionError;
        res.writeHead("status" in answer ? (answer.status ?? 200) : 200, headers);
        res.end(answer.payload);
        return;
      }
      const target = String(req.headers["x-amz-target"] ?? "");
      if (target === "AmazonSQS.SendMessage") {
        const input = JSON.parse(body) as { QueueUrl: string; MessageBody: string };
        if (!queues.has(input.QueueUrl)) {
          json(
            400,
            {
              __type: "com.amazonaws.sqs#QueueDoesNotExist",
              message: "The specified queue does not exist.",
            },
            { "x-amzn-query-error": "AWS.SimpleQueueService.NonExistentQueue;Sender" },
          );
          return;
        }
        json(200, {
          MD5OfMessageBody: createHash("md5").update(input.MessageBody).digest("hex"),
          MessageId: randomUUID(),
        });
        return;
      }
      if (target === "AWSEvents.PutEvents") {
        const input = JSON.parse(body) as { Entries: { Source?: string }[] };
        const entries = input.Entries.map((entry) =>
          entry.Source === "fail"
            ? { ErrorCode: "InternalFailure", ErrorMessage: "the entry failed" }
            : { EventId: randomUUID() },
        );
        const failed = entries.filter((e) => "ErrorCode" in e).length;
        json(200, { Entries: entries, FailedEntryCount: failed });
        return;
      }
      const form = new URLSearchParams(body);
      if (form.get("Action") === "Publish") {
        res.writeHead(200, { "content-type": "text/xml", "x-amzn-requestid": requestId });
        res.end(
          `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>${randomUUID()}</MessageId></PublishResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></PublishResponse>`,
        );
        return;
      }
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: `no fake for ${req.method} ${path} ${target}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    functions,
    queues,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
