import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, startStack, type Stack } from "./stack.js";

/**
 * Admission control over HTTP: past its burst a key gets 429 ThrottlingException with
 * Retry-After and nothing is started; every start that was accepted runs to its end.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    env: { STEPWISE_START_RATE: "2", STEPWISE_START_BURST: "5", STEPWISE_MAX_BACKLOG: "0" },
  });
  const definition = { StartAt: "P", States: { P: { Type: "Pass", End: true } } };
  expect((await stack.client.post("/v1/state-machines", { name: "a", definition })).status).toBe(
    201,
  );
  expect((await stack.client.post("/v1/state-machines", { name: "b", definition })).status).toBe(
    201,
  );
});
afterAll(async () => {
  await stack?.close();
});

describe("admission control", () => {
  it("a burst past the key's bucket is refused with 429 and Retry-After; accepted starts all run", async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        stack.client.post("/v1/state-machines/a/executions", { input: {} }, { key: KEYS.run }),
      ),
    );
    const accepted = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 429);
    expect(accepted.length).toBe(5);
    expect(refused.length).toBe(7);
    for (const r of refused) {
      expect(r.body).toMatchObject({ error: "ThrottlingException", details: [] });
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    for (const a of accepted) {
      const ended = await stack.client.until(async () => {
        const record = await stack.client.get(`/v1/executions/${a.body.executionId}`);
        return record.body.status === "SUCCEEDED" ? record : undefined;
      });
      expect(ended.body.status).toBe("SUCCEEDED");
    }
    const listed = await stack.client.get("/v1/executions?stateMachine=a");
    expect(listed.body.items).toHaveLength(5);
  });

  it("another key has its own bucket (machine b's is fresh too)", async () => {
    const other = await stack.client.post("/v1/state-machines/b/executions", { input: {} });
    expect(other.status).toBe(201);
  });
});
