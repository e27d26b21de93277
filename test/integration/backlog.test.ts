import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Admission } from "../../api/admission.js";
import { createMachine, harness, passChain, type Harness } from "./helpers.js";

/** The backlog admission control watches: transitions waiting for a worker, on real Redis. */
let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h.close();
});

describe("backlog", () => {
  it("counts the transitions no worker took yet, and refuses starts above the ceiling", async () => {
    await createMachine(h.runtime, "m", passChain(1));
    for (let i = 0; i < 3; i++) await h.runtime.startExecution("m", { input: {} });
    expect(await h.runtime.backlog()).toBe(3);
    const admission = new Admission({ rate: 0, burst: 1, maxBacklog: 2 }, () =>
      h.runtime.backlog(),
    );
    await expect(admission.admit(undefined, "m")).rejects.toMatchObject({
      code: "ThrottlingException",
    });
    await h.startWorker();
    for (const { executionId } of (await h.runtime.listExecutions({})).items) {
      expect((await h.runtime.waitForExecution(executionId, 5000)).status).toBe("SUCCEEDED");
    }
    expect(await h.runtime.backlog()).toBe(0);
  });
});
