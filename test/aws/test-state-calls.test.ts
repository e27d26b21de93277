import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SFNClient, TestStateCommand } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../e2e/stack.js";
import { failure, sfn } from "./helpers.js";

/**
 * TestState on a Task without a mock calls the resource (issue #36).
 *
 * AWS API reference, TestState
 * (https://docs.aws.amazon.com/step-functions/latest/apireference/API_TestState.html):
 * "Using this API, you can test the following: A state's input and output
 * processing data flow; An AWS service integration request and response; An HTTP
 * Task request and response", and "TestState only supports the following when a mock
 * is specified: Activity tasks, .sync or .waitForTaskToken service integration
 * patterns, Parallel, or Map states". Stepwise calls the resource with the runners
 * its workers have, under the same egress policy: the stack opens 127.0.0.1 only
 * (STEPWISE_EGRESS_ALLOW), so 127.0.0.2 stays refused.
 */
let stack: Stack;
let client: SFNClient;
let api: Server;
let port = 0;
const seen: { method: string; url: string; body: string }[] = [];

async function body(request: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of request) text += String(chunk);
  return text;
}

beforeAll(async () => {
  api = createServer((request, response) => {
    void body(request).then((text) => {
      seen.push({ method: request.method ?? "", url: request.url ?? "", body: text });
      if (request.url === "/fail") {
        response.writeHead(503, { "content-type": "application/json" });
        response.end(JSON.stringify({ message: "down" }));
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ echoed: text === "" ? null : JSON.parse(text) }));
    });
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  port = (api.address() as AddressInfo).port;
  stack = await startStack({ egressAllow: "127.0.0.1" });
  client = sfn(stack);
});
afterAll(async () => {
  client?.destroy();
  await stack?.close();
  api?.close();
});

function httpTask(endpoint: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Type: "Task",
    Resource: "arn:aws:states:::http:invoke",
    Parameters: { ApiEndpoint: endpoint, Method: "POST", "RequestBody.$": "$.order" },
    ResultSelector: { "reply.$": "$.ResponseBody" },
    ResultPath: "$.http",
    Next: "Done",
    ...extra,
  };
}

describe("TestState calls a Task's resource when there is no mock", () => {
  it("REST: an HTTP task reaches the server; DEBUG shows the real response", async () => {
    seen.length = 0;
    const reply = await stack.client.post("/v1/state-machines/test-state", {
      definition: httpTask(`http://127.0.0.1:${port}/orders`),
      input: { order: { id: 7 } },
      inspectionLevel: "DEBUG",
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: "SUCCEEDED",
      nextState: "Done",
      output: { order: { id: 7 }, http: { reply: { echoed: { id: 7 } } } },
      inspectionData: {
        afterParameters: { ApiEndpoint: `http://127.0.0.1:${port}/orders`, RequestBody: { id: 7 } },
        result: { ResponseBody: { echoed: { id: 7 } } },
        afterResultSelector: { reply: { echoed: { id: 7 } } },
      },
    });
    expect(seen).toEqual([{ method: "POST", url: "/orders", body: '{"id":7}' }]);
  });

  it("AWS SDK: the same call, and a failing answer is the task's error (caught or not)", async () => {
    seen.length = 0;
    const ok = await client.send(
      new TestStateCommand({
        definition: JSON.stringify(httpTask(`http://127.0.0.1:${port}/orders`)),
        input: '{"order":{"id":8}}',
      }),
    );
    expect(ok).toMatchObject({ status: "SUCCEEDED", nextState: "Done" });
    expect(JSON.parse(ok.output!)).toEqual({
      order: { id: 8 },
      http: { reply: { echoed: { id: 8 } } },
    });
    const failed = await client.send(
      new TestStateCommand({
        definition: JSON.stringify(httpTask(`http://127.0.0.1:${port}/fail`)),
        input: '{"order":{"id":9}}',
      }),
    );
    expect(failed).toMatchObject({ status: "FAILED", error: "States.Http.StatusCode.503" });
    const caught = await client.send(
      new TestStateCommand({
        definition: JSON.stringify(
          httpTask(`http://127.0.0.1:${port}/fail`, {
            Catch: [{ ErrorEquals: ["States.ALL"], Next: "Recover" }],
          }),
        ),
        input: '{"order":{"id":10}}',
      }),
    );
    expect(caught).toMatchObject({
      status: "CAUGHT_ERROR",
      error: "States.Http.StatusCode.503",
      nextState: "Recover",
    });
    expect(seen.map((s) => s.url)).toEqual(["/orders", "/fail", "/fail"]);
  });

  it("the egress policy holds: an address it does not open is refused, never reached", async () => {
    seen.length = 0;
    const refused = await client.send(
      new TestStateCommand({
        definition: JSON.stringify(httpTask(`http://127.0.0.2:${port}/orders`)),
        input: '{"order":{"id":11}}',
      }),
    );
    expect(refused).toMatchObject({ status: "FAILED", error: "States.Http.Socket" });
    expect(refused.cause).toMatch(/refused by the egress policy/);
    expect(seen).toEqual([]);
  });

  it("a resource that answers later (.waitForTaskToken, .sync) still needs a mock", async () => {
    const waiting = {
      Type: "Task",
      Resource: "arn:aws:states:::lambda:invoke.waitForTaskToken",
      Parameters: { FunctionName: "f", Payload: { "token.$": "$$.Task.Token" } },
      End: true,
    };
    const aws = await failure(
      client.send(new TestStateCommand({ definition: JSON.stringify(waiting) })),
    );
    expect(aws.name).toBe("ValidationException");
    expect(aws.message).toMatch(/mock/);
    const rest = await stack.client.post("/v1/state-machines/test-state", {
      definition: { ...waiting, Resource: "arn:aws:states:::states:startExecution.sync:2" },
    });
    expect(rest.status).toBe(400);
    expect(rest.body.error).toBe("InvalidRequest");
  });

  it("a resource no runner of the service calls needs a mock, and says so", async () => {
    const rest = await stack.client.post("/v1/state-machines/test-state", {
      definition: { Type: "Task", Resource: "function:nobody", End: true },
    });
    expect(rest.status).toBe(400);
    expect(rest.body).toMatchObject({ error: "InvalidRequest" });
    expect(JSON.stringify(rest.body)).toContain("function:nobody");
  });
});
