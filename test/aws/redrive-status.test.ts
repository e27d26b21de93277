import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  type DescribeExecutionCommandOutput,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from "@aws-sdk/client-sfn";
import { describe, expect, it } from "vitest";
import { type Stack } from "../e2e/stack.js";
import { awsStackPerFile } from "./helpers.js";

/**
 * DescribeExecution's redriveStatus and redriveStatusReason, as the runtime's
 * `redrivability` (runtime/executions/redrive.ts) answers them for each status.
 */
let stack: Stack;
let client: SFNClient;

awsStackPerFile((opened) => ({ stack, client } = opened));

async function machine(name: string, states: Record<string, unknown>): Promise<string> {
  const created = await client.send(
    new CreateStateMachineCommand({
      name,
      roleArn: "arn:aws:iam::123456789012:role/x",
      definition: JSON.stringify({ StartAt: Object.keys(states)[0], States: states }),
    }),
  );
  return created.stateMachineArn!;
}

async function start(stateMachineArn: string): Promise<string> {
  const started = await client.send(new StartExecutionCommand({ stateMachineArn, input: "{}" }));
  return started.executionArn!;
}

async function describeWhen(
  executionArn: string,
  status: string,
): Promise<DescribeExecutionCommandOutput> {
  for (;;) {
    const d = await client.send(new DescribeExecutionCommand({ executionArn }));
    if (d.status === status) return d;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("DescribeExecution's redriveStatus", () => {
  it("RUNNING (paused too): NOT_REDRIVABLE, in AWS's words; once stopped: REDRIVABLE", async () => {
    const waits = await machine("waits", { W: { Type: "Wait", Seconds: 600, End: true } });
    const running = await start(waits);
    expect(await describeWhen(running, "RUNNING")).toMatchObject({
      redriveCount: 0,
      redriveStatus: "NOT_REDRIVABLE",
      redriveStatusReason: "Execution is RUNNING and cannot be redriven",
    });

    // Paused (REST's own): AWS clients see RUNNING, and the same reason.
    const paused = await start(waits);
    await describeWhen(paused, "RUNNING");
    const pause = await stack.client.post(`/v1/executions/${encodeURIComponent(paused)}/pause`, {});
    expect(pause.body.status).toBe("PAUSED");
    expect(await describeWhen(paused, "RUNNING")).toMatchObject({
      redriveStatus: "NOT_REDRIVABLE",
      redriveStatusReason: "Execution is RUNNING and cannot be redriven",
    });

    for (const executionArn of [running, paused]) {
      await client.send(new StopExecutionCommand({ executionArn }));
      const aborted = await describeWhen(executionArn, "ABORTED");
      expect(aborted.redriveStatus).toBe("REDRIVABLE");
      expect(aborted.redriveStatusReason).toBeUndefined();
    }
  });

  it("SUCCEEDED: NOT_REDRIVABLE with the runtime's reason", async () => {
    const executionArn = await start(await machine("passes", { P: { Type: "Pass", End: true } }));
    expect(await describeWhen(executionArn, "SUCCEEDED")).toMatchObject({
      redriveStatus: "NOT_REDRIVABLE",
      redriveStatusReason: `Execution '${executionArn}' is SUCCEEDED: only FAILED, TIMED_OUT or ABORTED executions can be redriven`,
    });
  });

  it("FAILED: REDRIVABLE, without a reason", async () => {
    const executionArn = await start(
      await machine("fails", { F: { Type: "Fail", Error: "Broken", Cause: "on purpose" } }),
    );
    const failed = await describeWhen(executionArn, "FAILED");
    expect(failed).toMatchObject({
      error: "Broken",
      redriveCount: 0,
      redriveStatus: "REDRIVABLE",
    });
    expect(failed.redriveStatusReason).toBeUndefined();
  });
});
