import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteKeys, REDIS_URL } from "../integration/helpers.js";
import { exited, spawnStepwise, testPrefix, until, type Spawned } from "./processes.js";

/**
 * The service's home page is the console: `GET /` (and `HEAD /`) redirect a browser
 * to `/console/`, while `POST /` stays the AWS Step Functions endpoint.
 */
const prefix = testPrefix("root-redirect");
let spawned: Spawned;
let base: string;

beforeAll(async () => {
  spawned = spawnStepwise(["serve"], {
    env: { PORT: "0", REDIS_URL, STEPWISE_PREFIX: prefix, LOG_LEVEL: "info" },
  });
  // Loading the sources through tsx is slow beside a busy suite.
  const port = await until(
    async () =>
      /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(spawned.output())?.[1] ??
      (spawned.child.exitCode !== null ? "exited" : undefined),
    60_000,
  );
  if (port === "exited") throw new Error(`serve stopped before listening:\n${spawned.output()}`);
  base = `http://127.0.0.1:${port}`;
}, 90_000);

afterAll(async () => {
  if (spawned) {
    spawned.child.kill("SIGTERM");
    await exited(spawned.child).catch(() => spawned.child.kill("SIGKILL"));
  }
  await deleteKeys(REDIS_URL, prefix);
}, 60_000);

describe("/", () => {
  it.each(["GET", "HEAD"])("%s / is a temporary redirect to /console/", async (method) => {
    const reply = await fetch(`${base}/`, { method, redirect: "manual" });
    expect(reply.status).toBe(302);
    expect(reply.headers.get("location")).toBe("/console/");
  });

  it("a browser following it lands on /console/", async () => {
    // 200 with the built console, 503 naming the build step without it.
    const reply = await fetch(`${base}/`);
    expect(new URL(reply.url).pathname).toBe("/console/");
    expect([200, 503]).toContain(reply.status);
  });

  it("POST / is still the AWS JSON 1.0 endpoint", async () => {
    const aws = (target: string) =>
      fetch(`${base}/`, {
        method: "POST",
        headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": target },
        body: "{}",
      });
    const listed = await aws("AWSStepFunctions.ListStateMachines");
    expect(listed.status).toBe(200);
    expect(listed.headers.get("content-type")).toContain("application/x-amz-json-1.0");
    expect(await listed.json()).toEqual({ stateMachines: [] });
    const unknown = await aws("AWSStepFunctions.NoSuchAction");
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get("x-amzn-errortype")).toBe("UnknownOperationException");
  });
});
