import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

/**
 * Issue 13's finding, end to end: a definition POSTed to the API that points an HTTP
 * task at the service's own loopback fails with States.Http.Socket, and the server
 * behind that address never sees a request. The stack runs the production policy.
 */
let stack: Stack;
let inside: Server;
let hits = 0;

beforeAll(async () => {
  inside = createServer((_req, res) => {
    hits++;
    res.end("secret");
  });
  await new Promise<void>((resolve) => inside.listen(0, "127.0.0.1", resolve));
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
  inside?.close();
});

describe("the egress policy in a running service", () => {
  it("an HTTP task aimed at loopback fails with States.Http.Socket naming the policy", async () => {
    const port = (inside.address() as AddressInfo).port;
    const created = await stack.client.post("/v1/state-machines", {
      name: "ssrf",
      definition: {
        StartAt: "Steal",
        States: {
          Steal: {
            Type: "Task",
            Resource: "arn:aws:states:::http:invoke",
            Parameters: { ApiEndpoint: `http://localhost:${port}/admin` },
            End: true,
          },
        },
      },
    });
    expect(created.status).toBe(201);
    const run = await stack.client.post("/v1/state-machines/ssrf/executions?wait=20", {});
    expect(run.body).toMatchObject({ status: "FAILED", error: "States.Http.Socket" });
    expect(run.body.cause).toMatch(/refused by the egress policy; STEPWISE_EGRESS_ALLOW opens/);
    expect(hits).toBe(0);
  });
});
