import { DescribeExecutionCommand, ListExecutionsCommand, SFNClient } from "@aws-sdk/client-sfn";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childExecutionOf } from "../../console/src/components/child-execution.js";
import { deriveHistory } from "../../console/src/status/derive.js";
import { until } from "./processes.js";
import { KEYS, REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * Child executions of other state machines (`arn:aws:states:::states:startExecution`)
 * through the binary: `.sync:2` answers the child's description with its output
 * parsed, `.sync` with it as text, fire and forget answers StartExecution's result
 * while the child runs on, a failing child fails the parent's task with a
 * catchable States.TaskFailed, `.waitForTaskToken` waits for the child's callback,
 * and stopping the parent stops its `.sync` child. The child's REST record names
 * its parent (`parentExecution`, documented in the OpenAPI document, never in AWS's
 * DescribeExecution), and the console's link from the parent's task to its child
 * (console/src/components/child-execution.ts) finds the child in the parent's history.
 */
let stack: Stack;
const enc = encodeURIComponent;
const arn = (name: string) => `arn:aws:states:us-east-1:123456789012:stateMachine:${name}`;

const machines: Record<string, unknown> = {
  "child-echo": {
    StartAt: "Echo",
    States: {
      Echo: {
        Type: "Pass",
        Parameters: {
          "n.$": "$.n",
          "startedBy.$": "$.AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID",
        },
        End: true,
      },
    },
  },
  "child-fail": {
    StartAt: "Boom",
    States: { Boom: { Type: "Fail", Error: "Child.Boom", Cause: "the child broke" } },
  },
  "child-slow": {
    StartAt: "Sleep",
    States: { Sleep: { Type: "Wait", Seconds: 600, End: true } },
  },
  "parent-sync2": parent("arn:aws:states:::states:startExecution.sync:2", "child-echo"),
  "parent-sync": parent("arn:aws:states:::states:startExecution.sync", "child-echo"),
  "parent-start": parent("arn:aws:states:::states:startExecution", "child-echo"),
  "parent-stops": parent("arn:aws:states:::states:startExecution.sync", "child-slow"),
  // The task times out; a Catch takes the parent on to a long Wait (it runs on).
  "parent-task-timeout": {
    StartAt: "Run",
    States: {
      Run: {
        Type: "Task",
        Resource: "arn:aws:states:::states:startExecution.sync:2",
        Parameters: { StateMachineArn: arn("child-slow"), Input: { n: 1 } },
        TimeoutSeconds: 1,
        Catch: [{ ErrorEquals: ["States.Timeout"], ResultPath: "$.err", Next: "Linger" }],
        End: true,
      },
      Linger: { Type: "Wait", Seconds: 600, End: true },
    },
  },
  // A Parallel sibling fails: the `.sync` branch's task is stopped; a Catch runs on.
  "parent-branch-fails": {
    StartAt: "Both",
    States: {
      Both: {
        Type: "Parallel",
        Branches: [
          {
            StartAt: "Run",
            States: {
              Run: {
                Type: "Task",
                Resource: "arn:aws:states:::states:startExecution.sync",
                Parameters: { StateMachineArn: arn("child-slow"), Input: { n: 2 } },
                End: true,
              },
            },
          },
          {
            StartAt: "Pause",
            States: {
              Pause: { Type: "Wait", Seconds: 2, Next: "Boom" },
              Boom: { Type: "Fail", Error: "Sibling.Boom" },
            },
          },
        ],
        Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.err", Next: "Linger" }],
        End: true,
      },
      Linger: { Type: "Wait", Seconds: 600, End: true },
    },
  },
  "parent-catch": {
    StartAt: "Run",
    States: {
      Run: {
        Type: "Task",
        Resource: "arn:aws:states:::states:startExecution.sync:2",
        Parameters: { StateMachineArn: arn("child-fail"), Input: { n: 1 } },
        Catch: [{ ErrorEquals: ["States.TaskFailed"], ResultPath: "$.err", Next: "Caught" }],
        End: true,
      },
      Caught: { Type: "Pass", End: true },
    },
  },
  "parent-named": {
    StartAt: "Run",
    States: {
      Run: {
        Type: "Task",
        Resource: "arn:aws:states:::states:startExecution.sync:2",
        Parameters: { StateMachineArn: arn("child-fail"), Input: { n: 1 }, Name: "named-once" },
        Retry: [{ ErrorEquals: ["States.TaskFailed"], MaxAttempts: 1, IntervalSeconds: 1 }],
        Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.err", Next: "Caught" }],
        End: true,
      },
      Caught: { Type: "Pass", End: true },
    },
  },
  "parent-callback": {
    StartAt: "Run",
    States: {
      Run: {
        Type: "Task",
        Resource: "arn:aws:states:::states:startExecution.waitForTaskToken",
        Parameters: {
          StateMachineArn: arn("child-slow"),
          Input: { "token.$": "$$.Task.Token" },
        },
        End: true,
      },
    },
  },
};

function parent(resource: string, child: string) {
  return {
    StartAt: "Run",
    States: {
      Run: {
        Type: "Task",
        Resource: resource,
        Parameters: { StateMachineArn: arn(child), Input: { "n.$": "$.n" } },
        End: true,
      },
    },
  };
}

beforeAll(async () => {
  stack = await startStack();
  for (const [name, definition] of Object.entries(machines)) {
    const created = await stack.client.post("/v1/state-machines", { name, definition });
    expect(created.status).toBe(201);
    // The validator knows the resources: no UNSERVED_RESOURCE warning.
    expect(created.body.warnings ?? []).toEqual([]);
  }
});

afterAll(async () => {
  await stack?.close();
});

async function start(machine: string, input: Record<string, unknown> = { n: 21 }) {
  const reply = await stack.client.post(`/v1/state-machines/${machine}/executions`, { input });
  expect(reply.status).toBe(201);
  return reply.body.executionId as string;
}

async function describeExecution(id: string): Promise<any> {
  return (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
}

async function ended(id: string): Promise<any> {
  return until(async () => {
    const r = await describeExecution(id);
    return r.status !== "RUNNING" ? r : undefined;
  });
}

/** The child the parent's task started (the history's TaskSubmitted output). */
async function childOf(id: string): Promise<string> {
  return until(async () => {
    const history = (await stack.client.get(`/v1/executions/${enc(id)}/history`)).body
      .items as any[];
    const submitted = history.find((e) => e.type === "TaskSubmitted");
    return submitted
      ? (JSON.parse(submitted.taskSubmittedEventDetails.output).ExecutionArn as string)
      : undefined;
  });
}

/** The child the console's state panel links to: the `Run` entry's, from the history. */
async function linkedChild(id: string): Promise<string | undefined> {
  const events = (await stack.client.get(`/v1/executions/${enc(id)}/history`)).body.items as any[];
  const derived = deriveHistory(events);
  const run = derived.states.get("Run")?.entries.at(-1);
  return run ? childExecutionOf(events, derived.entryOfEvent, run.enteredEventId) : undefined;
}

/** The `parentExecution` field of an execution's record, read from Redis. */
async function recordedParent(executionArn: string): Promise<string | null> {
  const short = executionArn.slice(executionArn.indexOf(":execution:") + ":execution:".length);
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${stack.prefix}*:x:${short}`);
      cursor = next;
      if (keys[0]) return await redis.hget(keys[0], "pe");
    } while (cursor !== "0");
    return null;
  } finally {
    redis.disconnect();
  }
}

describe("states:startExecution", () => {
  it(".sync:2 answers the child's description with its output parsed", async () => {
    const id = await start("parent-sync2");
    const record = await ended(id);
    expect(record.status).toBe("SUCCEEDED");
    const out = record.output;
    expect(out).toMatchObject({
      StateMachineArn: expect.stringMatching(/:stateMachine:child-echo$/),
      Status: "SUCCEEDED",
      Output: { n: 21, startedBy: id },
      OutputDetails: { Included: true },
      Input: { n: 21, AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: id },
      InputDetails: { Included: true },
    });
    expect(typeof out.StartDate).toBe("number");
    expect(out.StopDate).toBeGreaterThanOrEqual(out.StartDate);
    const child = await describeExecution(out.ExecutionArn);
    expect(child.status).toBe("SUCCEEDED");
    expect(child.name).toBe(out.Name);
    expect(child.input).toEqual({ n: 21, AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: id });
    // REST names the parent on the child's record, not on the parent's.
    expect(child.parentExecution).toBe(id);
    expect(record).not.toHaveProperty("parentExecution");
    expect(await linkedChild(id)).toBe(out.ExecutionArn);
  });

  it(".sync answers the child's input and output as JSON text", async () => {
    const record = await ended(await start("parent-sync", { n: 2 }));
    expect(record.status).toBe("SUCCEEDED");
    expect(typeof record.output.Output).toBe("string");
    expect(JSON.parse(record.output.Output)).toMatchObject({ n: 2 });
    expect(typeof record.output.Input).toBe("string");
  });

  it("fire and forget answers ExecutionArn and StartDate; the child runs", async () => {
    const id = await start("parent-start", { n: 5 });
    const record = await ended(id);
    expect(record.status).toBe("SUCCEEDED");
    expect(Object.keys(record.output).sort()).toEqual(["ExecutionArn", "StartDate"]);
    expect(record.output.ExecutionArn).toMatch(/:execution:child-echo:/);
    const child = await ended(record.output.ExecutionArn);
    expect(child.status).toBe("SUCCEEDED");
    expect(child.output).toEqual({ n: 5, startedBy: id });
    // The child's record names its parent (runtime/store/fields.ts `parentExecution`).
    expect(await recordedParent(record.output.ExecutionArn)).toBe(id);
    expect(child.parentExecution).toBe(id);
    expect(record).not.toHaveProperty("parentExecution");
    expect(await linkedChild(id)).toBe(record.output.ExecutionArn);
    // A listing's item names it too.
    const listed = await stack.client.get(`/v1/executions?stateMachine=child-echo&limit=1000`);
    expect(listed.status).toBe(200);
    const item = (listed.body.items as any[]).find(
      (e) => e.executionId === record.output.ExecutionArn,
    );
    expect(item?.parentExecution).toBe(id);
  });

  it("a failing child fails the task with States.TaskFailed, which a Catch handles", async () => {
    const record = await ended(await start("parent-catch"));
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output.err.Error).toBe("States.TaskFailed");
    const cause = JSON.parse(record.output.err.Cause);
    expect(cause).toMatchObject({
      Status: "FAILED",
      Error: "Child.Boom",
      Cause: "the child broke",
    });
  });

  it("a Retry with a fixed Name finds the ended child's name taken, as AWS does", async () => {
    const record = await ended(await start("parent-named"));
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output.err.Error).toBe("StepFunctions.ExecutionAlreadyExistsException");
  });

  it(".waitForTaskToken waits for the callback of the child's token", async () => {
    const id = await start("parent-callback");
    const child = await describeExecution(await childOf(id));
    expect(child.parentExecution).toBe(id);
    // While the parent waits, its task links to the child (TaskSubmitted's output)…
    expect(await linkedChild(id)).toBe(child.executionId);
    const token = child.input.token as string;
    expect(token).toBeTruthy();
    const answered = await stack.client.post(`/v1/task-tokens/${enc(token)}/success`, {
      output: { done: true },
    });
    expect(answered.status).toBe(200);
    const record = await ended(id);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output).toEqual({ done: true });
    // …and still once the callback's result (without ExecutionArn) ended the task.
    expect(await linkedChild(id)).toBe(child.executionId);
    await stack.client.post(`/v1/executions/${enc(child.executionId)}/stop`, {});
  });

  it("stopping the parent stops its .sync child", async () => {
    const id = await start("parent-stops");
    const child = await childOf(id);
    expect((await describeExecution(child)).status).toBe("RUNNING");
    const stopped = await stack.client.post(`/v1/executions/${enc(id)}/stop`, {});
    expect(stopped.status).toBe(200);
    const record = await ended(child);
    expect(record.status).toBe("ABORTED");
    expect(record.cause).toBe(abortedCause(id));
  });

  it("a .sync task that times out stops its child while the parent runs on", async () => {
    const id = await start("parent-task-timeout");
    const child = await childOf(id);
    const record = await ended(child);
    expect(record.status).toBe("ABORTED");
    expect(record.cause).toBe(abortedCause(id));
    // The parent caught the timeout and waits in `Linger`: it did not end.
    expect((await describeExecution(id)).status).toBe("RUNNING");
    await stack.client.post(`/v1/executions/${enc(id)}/stop`, {});
  });

  it("a failing Parallel sibling stops the .sync child of the other branch", async () => {
    const id = await start("parent-branch-fails");
    const child = await childOf(id);
    const record = await ended(child);
    expect(record.status).toBe("ABORTED");
    expect(record.cause).toBe(abortedCause(id));
    expect((await describeExecution(id)).status).toBe("RUNNING");
    await stack.client.post(`/v1/executions/${enc(id)}/stop`, {});
  });
});

/** The cause AWS stops a `.sync` task's resource with when the task stops waiting. */
function abortedCause(parent: string): string {
  return `The Task state in AWS Step Functions execution [${parent}] which was managing this resource was aborted`;
}

describe("the parent–child link", () => {
  it("the OpenAPI document describes parentExecution on GET /v1/executions/:id", async () => {
    const doc = await stack.client.get("/docs/json", { key: null });
    expect(doc.status).toBe(200);
    const detail =
      doc.body.paths["/v1/executions/{executionId}"].get.responses["200"].content[
        "application/json"
      ].schema;
    expect(detail.properties.parentExecution).toMatchObject({ type: "string" });
    expect(detail.properties.parentExecution.description).toMatch(/startExecution/);
    expect(detail.required).not.toContain("parentExecution");
  });

  it("AWS's DescribeExecution and ListExecutions do not show it", async () => {
    const id = await start("parent-start", { n: 8 });
    const child = (await ended(id)).output.ExecutionArn as string;
    expect((await describeExecution(child)).parentExecution).toBe(id);
    const sfn = new SFNClient({
      endpoint: stack.url,
      region: "us-east-1",
      credentials: { accessKeyId: "ops", secretAccessKey: KEYS.admin },
      maxAttempts: 1,
    });
    try {
      const described = await sfn.send(new DescribeExecutionCommand({ executionArn: child }));
      expect(described.executionArn).toBe(child);
      expect(Object.keys(described).filter((k) => /parent/i.test(k))).toEqual([]);
      const listed = await sfn.send(
        new ListExecutionsCommand({ stateMachineArn: arn("child-echo") }),
      );
      const item = listed.executions?.find((e) => e.executionArn === child);
      expect(item).toBeDefined();
      expect(Object.keys(item!).filter((k) => /parent/i.test(k))).toEqual([]);
    } finally {
      sfn.destroy();
    }
  });
});
