import {
  CreateActivityCommand,
  CreateStateMachineCommand,
  DeleteActivityCommand,
  DescribeActivityCommand,
  DescribeExecutionCommand,
  DescribeStateMachineForExecutionCommand,
  GetActivityTaskCommand,
  GetExecutionHistoryCommand,
  ListActivitiesCommand,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  ListTagsForResourceCommand,
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
  TagResourceCommand,
  UntagResourceCommand,
  type GetExecutionHistoryCommandOutput,
  type HistoryEvent,
} from "@aws-sdk/client-sfn";
import { describe, expect, it } from "vitest";
import { startStack, type Stack } from "../e2e/stack.js";
import { CALLBACK, PASS, RUNNER, failure, sfn, awsStackPerFile } from "./helpers.js";

let stack: Stack;
let client: SFNClient;
const BASE = "arn:aws:states:us-east-1:123456789012:";

awsStackPerFile((opened) => ({ stack, client } = opened));

async function machine(name: string, definition: unknown): Promise<string> {
  const created = await client.send(
    new CreateStateMachineCommand({ name, definition: JSON.stringify(definition), roleArn: "r" }),
  );
  return created.stateMachineArn!;
}

/** DescribeExecution until the execution has ended. */
async function ended(executionArn: string) {
  for (let i = 0; i < 200; i++) {
    const d = await client.send(new DescribeExecutionCommand({ executionArn }));
    if (d.status !== "RUNNING") return d;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${executionArn} still runs`);
}

const CHAIN = {
  StartAt: "A",
  States: {
    A: { Type: "Pass", Next: "B" },
    B: { Type: "Pass", Next: "C" },
    C: { Type: "Pass", Next: "D" },
    D: { Type: "Pass", Result: { done: true }, End: true },
  },
};

describe("executions through the AWS SDK", () => {
  it("starts, describes, lists and reads history in both orders, page by page", async () => {
    const arn = await machine("chain", CHAIN);
    const started = await client.send(
      new StartExecutionCommand({ stateMachineArn: arn, name: "first", input: '{"n":1}' }),
    );
    expect(started.executionArn).toBe(`${BASE}execution:chain:first`);
    expect(started.startDate).toBeInstanceOf(Date);
    const done = await ended(started.executionArn!);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      name: "first",
      stateMachineArn: arn,
      input: '{"n":1}',
      inputDetails: { included: true },
      output: '{"done":true}',
    });
    expect(done.stopDate).toBeInstanceOf(Date);
    expect(done.stateMachineVersionArn).toBeUndefined();
    const meta = await client.send(
      new DescribeExecutionCommand({
        executionArn: started.executionArn,
        includedData: "METADATA_ONLY",
      }),
    );
    expect(meta.input).toBeUndefined();

    // The same name and input after the end: taken, as on AWS.
    expect(
      await failure(
        client.send(
          new StartExecutionCommand({ stateMachineArn: arn, name: "first", input: '{"n":1}' }),
        ),
      ),
    ).toMatchObject({ name: "ExecutionAlreadyExists" });
    expect(
      await failure(
        client.send(new StartExecutionCommand({ stateMachineArn: arn, input: "{nope" })),
      ),
    ).toMatchObject({ name: "InvalidExecutionInput" });
    expect(
      await failure(client.send(new StartExecutionCommand({ stateMachineArn: arn, name: "a b" }))),
    ).toMatchObject({ name: "InvalidName" });

    const all: HistoryEvent[] = [];
    let token: string | undefined;
    do {
      const page: GetExecutionHistoryCommandOutput = await client.send(
        new GetExecutionHistoryCommand({
          executionArn: started.executionArn,
          maxResults: 3,
          nextToken: token,
        }),
      );
      expect(page.events!.length).toBeLessThanOrEqual(3);
      all.push(...page.events!);
      token = page.nextToken;
    } while (token);
    expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
    expect(all[0]).toMatchObject({
      type: "ExecutionStarted",
      executionStartedEventDetails: { input: '{"n":1}' },
    });
    expect(all[0]!.timestamp).toBeInstanceOf(Date);
    expect(all.at(-1)).toMatchObject({ type: "ExecutionSucceeded" });
    const reversed: HistoryEvent[] = [];
    token = undefined;
    do {
      const page: GetExecutionHistoryCommandOutput = await client.send(
        new GetExecutionHistoryCommand({
          executionArn: started.executionArn,
          maxResults: 4,
          reverseOrder: true,
          includeExecutionData: false,
          nextToken: token,
        }),
      );
      reversed.push(...page.events!);
      token = page.nextToken;
    } while (token);
    expect(reversed.map((e) => e.id)).toEqual(all.map((e) => e.id).reverse());
    expect(reversed.at(-1)!.executionStartedEventDetails!.input).toBeUndefined();
    expect(
      await failure(
        client.send(
          new GetExecutionHistoryCommand({
            executionArn: started.executionArn,
            nextToken: "forged",
          }),
        ),
      ),
    ).toMatchObject({ name: "InvalidToken" });

    for (let i = 0; i < 3; i++) {
      await client.send(new StartExecutionCommand({ stateMachineArn: arn, name: `more-${i}` }));
    }
    const first = await client.send(
      new ListExecutionsCommand({ stateMachineArn: arn, maxResults: 2 }),
    );
    expect(first.executions).toHaveLength(2);
    const second = await client.send(
      new ListExecutionsCommand({
        stateMachineArn: arn,
        maxResults: 2,
        nextToken: first.nextToken,
      }),
    );
    const names = [...first.executions!, ...second.executions!].map((e) => e.name);
    expect(new Set(names)).toEqual(new Set(["first", "more-0", "more-1", "more-2"]));
    for (const name of ["more-0", "more-1", "more-2"])
      await ended(`${BASE}execution:chain:${name}`);
    const succeeded = await client.send(
      new ListExecutionsCommand({ stateMachineArn: arn, statusFilter: "SUCCEEDED" }),
    );
    expect(succeeded.executions).toHaveLength(4);
    expect(succeeded.executions![0]).toMatchObject({ status: "SUCCEEDED", stateMachineArn: arn });
    const none = await client.send(
      new ListExecutionsCommand({ stateMachineArn: arn, statusFilter: "FAILED" }),
    );
    expect(none.executions).toEqual([]);

    const forExecution = await client.send(
      new DescribeStateMachineForExecutionCommand({ executionArn: started.executionArn }),
    );
    expect(forExecution).toMatchObject({ stateMachineArn: arn, name: "chain", revisionId: "1" });
    expect(JSON.parse(forExecution.definition!)).toEqual(CHAIN);
    expect(
      await failure(
        client.send(new DescribeExecutionCommand({ executionArn: `${BASE}execution:chain:nope` })),
      ),
    ).toMatchObject({ name: "ExecutionDoesNotExist" });
  });

  it("answers task tokens through activities, and stops executions", async () => {
    const activity = await client.send(
      new CreateActivityCommand({ name: "review", tags: [{ key: "k", value: "v" }] }),
    );
    expect(activity.activityArn).toBe(`${BASE}activity:review`);
    const again = await client.send(new CreateActivityCommand({ name: "review" }));
    expect(again.activityArn).toBe(activity.activityArn);
    expect(
      await client.send(new DescribeActivityCommand({ activityArn: activity.activityArn })),
    ).toMatchObject({
      name: "review",
    });
    const listed = await client.send(new ListActivitiesCommand({}));
    expect(listed.activities!.map((a) => a.name)).toEqual(["review"]);

    const arn = await machine("reviewed", {
      StartAt: "Review",
      States: {
        Review: { Type: "Task", Resource: activity.activityArn, HeartbeatSeconds: 30, End: true },
      },
    });
    const worker = sfn(stack, CALLBACK);
    const ok = await client.send(
      new StartExecutionCommand({ stateMachineArn: arn, input: '{"doc":1}' }),
    );
    // The same name and input while it runs: the same execution.
    const okAgain = await client.send(
      new StartExecutionCommand({
        stateMachineArn: arn,
        input: '{"doc":1}',
        name: ok.executionArn!.split(":").at(-1),
      }),
    );
    expect(okAgain.executionArn).toBe(ok.executionArn);
    const task = await worker.send(
      new GetActivityTaskCommand({ activityArn: activity.activityArn, workerName: "w1" }),
    );
    expect(JSON.parse(task.input!)).toEqual({ doc: 1 });
    await worker.send(new SendTaskHeartbeatCommand({ taskToken: task.taskToken }));
    await worker.send(
      new SendTaskSuccessCommand({ taskToken: task.taskToken, output: '{"approved":true}' }),
    );
    expect(await ended(ok.executionArn!)).toMatchObject({
      status: "SUCCEEDED",
      output: '{"approved":true}',
    });
    expect(
      await failure(
        worker.send(new SendTaskSuccessCommand({ taskToken: task.taskToken, output: "{}" })),
      ),
    ).toMatchObject({ name: "TaskDoesNotExist" });
    expect(
      await failure(
        worker.send(new SendTaskSuccessCommand({ taskToken: "bad token!", output: "{}" })),
      ),
    ).toMatchObject({ name: "InvalidToken" });
    // A callback key may not read executions.
    expect(
      await failure(worker.send(new DescribeExecutionCommand({ executionArn: ok.executionArn }))),
    ).toMatchObject({ name: "AccessDeniedException" });

    const bad = await client.send(new StartExecutionCommand({ stateMachineArn: arn }));
    const badTask = await worker.send(
      new GetActivityTaskCommand({ activityArn: activity.activityArn }),
    );
    await worker.send(
      new SendTaskFailureCommand({ taskToken: badTask.taskToken, error: "Rejected", cause: "no" }),
    );
    expect(await ended(bad.executionArn!)).toMatchObject({
      status: "FAILED",
      error: "Rejected",
      cause: "no",
    });

    const stopped = await client.send(new StartExecutionCommand({ stateMachineArn: arn }));
    const stop = await sfn(stack, RUNNER).send(
      new StopExecutionCommand({
        executionArn: stopped.executionArn,
        error: "Ops",
        cause: "enough",
      }),
    );
    expect(stop.stopDate).toBeInstanceOf(Date);
    expect(await ended(stopped.executionArn!)).toMatchObject({ status: "ABORTED", error: "Ops" });
    worker.destroy();

    await client.send(new DeleteActivityCommand({ activityArn: activity.activityArn }));
    expect(
      await failure(
        client.send(new DescribeActivityCommand({ activityArn: activity.activityArn })),
      ),
    ).toMatchObject({ name: "ActivityDoesNotExist" });
  });

  it("$$.Execution.RoleArn is the state machine's role, in every state of the run", async () => {
    const role = "arn:aws:iam::123456789012:role/payments-runner";
    const created = await client.send(
      new CreateStateMachineCommand({
        name: "role-reader",
        roleArn: role,
        definition: JSON.stringify({
          StartAt: "First",
          States: {
            First: {
              Type: "Pass",
              Parameters: { "role.$": "$$.Execution.RoleArn" },
              Next: "Later",
            },
            // A later transition: the context comes from the stored record, not the start.
            Later: { Type: "Wait", Seconds: 1, Next: "Last" },
            Last: {
              Type: "Pass",
              Parameters: { "first.$": "$.role", "last.$": "$$.Execution.RoleArn" },
              End: true,
            },
          },
        }),
      }),
    );
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: created.stateMachineArn, input: "{}" }),
    );
    const described = await ended(executionArn!);
    expect(described.status).toBe("SUCCEEDED");
    expect(JSON.parse(described.output!)).toEqual({ first: role, last: role });
  });

  it("tags state machines and activities", async () => {
    const arn = await machine("tagged", JSON.parse(PASS));
    await client.send(
      new TagResourceCommand({
        resourceArn: arn,
        tags: [
          { key: "b", value: "2" },
          { key: "a", value: "1" },
        ],
      }),
    );
    await client.send(new UntagResourceCommand({ resourceArn: arn, tagKeys: ["b"] }));
    expect((await client.send(new ListTagsForResourceCommand({ resourceArn: arn }))).tags).toEqual([
      { key: "a", value: "1" },
    ]);
    const many = Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, value: "" }));
    expect(
      await failure(client.send(new TagResourceCommand({ resourceArn: arn, tags: many }))),
    ).toMatchObject({
      name: "TooManyTags",
    });
    expect(
      await failure(
        client.send(new ListTagsForResourceCommand({ resourceArn: `${BASE}stateMachine:none` })),
      ),
    ).toMatchObject({ name: "ResourceNotFound" });
    const act = await client.send(
      new CreateActivityCommand({ name: "tagged-act", tags: [{ key: "x", value: "y" }] }),
    );
    expect(
      (await client.send(new ListTagsForResourceCommand({ resourceArn: act.activityArn }))).tags,
    ).toEqual([{ key: "x", value: "y" }]);
  });

  it("refuses a request signed more than 15 minutes off, and unknown actions", async () => {
    const skewed = new SFNClient({
      endpoint: stack.url,
      region: "us-east-1",
      credentials: {
        accessKeyId: "ops",
        secretAccessKey: (await import("../e2e/stack.js")).KEYS.admin,
      },
      systemClockOffset: -20 * 60_000,
      maxAttempts: 1,
    });
    const f = await failure(skewed.send(new ListStateMachinesCommand({})));
    expect(f.name).toBe("InvalidSignatureException");
    expect(f.message).toMatch(/Signature expired/);
    skewed.destroy();
    const unsigned = await fetch(stack.url, {
      method: "POST",
      headers: {
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": "AWSStepFunctions.ListStateMachines",
      },
      body: "{}",
    });
    expect(unsigned.status).toBe(400);
    expect(((await unsigned.json()) as { __type: string }).__type).toBe(
      "MissingAuthenticationTokenException",
    );
  });
});

describe("without API keys", () => {
  it("takes unsigned requests (loopback only) and names unknown operations", async () => {
    const open = await startStack({ apiKeys: "" });
    try {
      const post = (target: string, body: unknown) =>
        fetch(open.url, {
          method: "POST",
          headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": target },
          body: JSON.stringify(body),
        });
      const created = await post("AWSStepFunctions.CreateStateMachine", {
        name: "open",
        definition: PASS,
        roleArn: "r",
      });
      expect(created.status).toBe(200);
      expect(created.headers.get("content-type")).toMatch(/application\/x-amz-json-1.0/);
      const unknown = await post("AWSStepFunctions.Frobnicate", {});
      expect(unknown.status).toBe(400);
      expect(unknown.headers.get("x-amzn-errortype")).toBe("UnknownOperationException");
      const garbage = await fetch(open.url, {
        method: "POST",
        headers: { "x-amz-target": "AWSStepFunctions.ListStateMachines" },
        body: "{not json",
      });
      expect(garbage.status).toBe(400);
      expect(((await garbage.json()) as { __type: string }).__type).toBe("SerializationException");
      const wrongType = await post("AWSStepFunctions.StartExecution", { stateMachineArn: 5 });
      expect(await wrongType.json()).toMatchObject({ __type: "ValidationException" });
    } finally {
      await open.close();
    }
  });
});
