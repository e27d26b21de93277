import { DescribeExecutionCommand, SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll } from "vitest";
import { KEYS, startStack, type Stack } from "../e2e/stack.js";

/**
 * The real AWS SDK pointed at a listening Stepwise (test/e2e/stack.ts: real Redis
 * runtime, real worker), signing with an API key's name and secret. `sync-` host
 * prefixes (StartSyncExecution, TestState) are off: they would name another host.
 */
export function sfn(
  stack: Stack,
  key: { id: string; secret: string } = { id: "ops", secret: KEYS.admin },
  region = "us-east-1",
): SFNClient {
  return new SFNClient({
    endpoint: stack.url,
    region,
    credentials: { accessKeyId: key.id, secretAccessKey: key.secret },
    disableHostPrefix: true,
    maxAttempts: 1,
  });
}

/**
 * One service for the file (`startStack`: `stepwise serve` on real Redis) and an SDK
 * client for it, opened before its tests and closed after them; `opened` hands both
 * to the file's own variables, as `harnessPerTest` does for the integration tests.
 */
export function awsStackPerFile(opened: (both: { stack: Stack; client: SFNClient }) => void): void {
  let both: { stack: Stack; client: SFNClient } | undefined;
  beforeAll(async () => {
    const stack = await startStack();
    both = { stack, client: sfn(stack) };
    opened(both);
  });
  afterAll(async () => {
    both?.client.destroy();
    await both?.stack.close();
  });
}

export const RUNNER = { id: "runner", secret: KEYS.run };
export const CALLBACK = { id: "approval-ui", secret: KEYS.callback };

export const PASS = JSON.stringify({
  StartAt: "P",
  States: { P: { Type: "Pass", Result: { ok: true }, ResultPath: "$.r", End: true } },
});

/** The exception name and message an SDK call failed with. */
export async function failure(
  call: Promise<unknown>,
): Promise<{ name: string; message: string; status?: number }> {
  try {
    await call;
  } catch (err) {
    const e = err as { name: string; message: string; $metadata?: { httpStatusCode?: number } };
    return {
      name: e.name,
      message: e.message,
      ...(e.$metadata?.httpStatusCode !== undefined ? { status: e.$metadata.httpStatusCode } : {}),
    };
  }
  throw new Error("the call succeeded");
}

/**
 * Waits until an execution is no longer RUNNING (its history is then whole: the
 * ExecutionStarted event itself is written by its first transition).
 */
export async function ended(client: SFNClient, executionArn: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { status } = await client.send(new DescribeExecutionCommand({ executionArn }));
    if (status !== "RUNNING") return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${executionArn} did not end`);
}
