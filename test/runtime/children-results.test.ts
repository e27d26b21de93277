import { describe, expect, it } from "vitest";
import {
  childAnswer,
  describeAnswer,
  hasEnded,
  parentTaskAbortedCause,
  startAnswer,
} from "../../runtime/children/child-results.js";
import { settleChildren, type ChildRuntime } from "../../runtime/children/child-watch.js";
import type { ChildLink, ChildLinks } from "../../runtime/children/child-links.js";
import { RuntimeError, type ExecutionRecord } from "../../runtime/contract/index.js";

const CHILD = "arn:aws:states:us-east-1:123456789012:execution:child:c-1";
const PARENT = "arn:aws:states:us-east-1:123456789012:execution:parent:p-1";

function record(over: Partial<ExecutionRecord> = {}): ExecutionRecord {
  return {
    executionId: CHILD,
    name: "c-1",
    stateMachine: "child",
    version: 1,
    status: "SUCCEEDED",
    input: { n: 1 },
    output: { m: 2 },
    startedAt: "2026-01-02T03:04:05.000Z",
    stoppedAt: "2026-01-02T03:04:06.500Z",
    ...over,
  };
}

describe("result shapes", () => {
  it("StartExecution: ExecutionArn and StartDate (epoch ms)", () => {
    expect(startAnswer(CHILD, "2026-01-02T03:04:05.000Z")).toEqual({
      ExecutionArn: CHILD,
      StartDate: Date.parse("2026-01-02T03:04:05.000Z"),
    });
  });

  it(".sync:2: DescribeExecution in PascalCase, input and output parsed", () => {
    expect(describeAnswer(record({ pinnedVersion: 1 }), "sync:2")).toEqual({
      ExecutionArn: CHILD,
      StateMachineArn: expect.stringMatching(/:stateMachine:child$/),
      StateMachineVersionArn: expect.stringMatching(/:stateMachine:child:1$/),
      Name: "c-1",
      Status: "SUCCEEDED",
      StartDate: Date.parse("2026-01-02T03:04:05.000Z"),
      StopDate: Date.parse("2026-01-02T03:04:06.500Z"),
      Input: { n: 1 },
      InputDetails: { Included: true },
      Output: { m: 2 },
      OutputDetails: { Included: true },
    });
  });

  it(".sync: input and output as JSON text", () => {
    const out = describeAnswer(record(), "sync");
    expect(out.Input).toBe('{"n":1}');
    expect(out.Output).toBe('{"m":2}');
  });

  it("a child that did not succeed fails the task with States.TaskFailed and its description", () => {
    const failed = record({ status: "FAILED", output: undefined, error: "E", cause: "C" });
    const answer = childAnswer(failed, "sync:2");
    expect(answer.kind).toBe("failure");
    if (answer.kind !== "failure") return;
    expect(answer.error).toBe("States.TaskFailed");
    expect(JSON.parse(answer.cause)).toMatchObject({ Status: "FAILED", Error: "E", Cause: "C" });
    expect(JSON.parse(answer.cause).Output).toBeUndefined();
    expect(childAnswer(record(), "sync")).toMatchObject({ kind: "success" });
  });

  it("RUNNING and PAUSED have not ended", () => {
    expect(hasEnded("RUNNING")).toBe(false);
    expect(hasEnded("PAUSED")).toBe(false);
    expect(hasEnded("ABORTED")).toBe(true);
  });
});

/** A watch over links held in memory and a runtime that records what it was asked. */
function fixture(
  records: Record<string, ExecutionRecord>,
  waiting: Record<string, ChildLink>,
  liveTokens: string[] = ["tok"],
) {
  const calls: unknown[][] = [];
  const links = {
    any: async () => Object.keys(waiting).length > 0,
    async *waiting() {
      for (const entry of Object.entries(waiting)) yield entry;
    },
    unlink: async (child: string) => void delete waiting[child],
  } as unknown as ChildLinks;
  const runtime: ChildRuntime = {
    async statusOf(id) {
      return records[id]?.status ?? null;
    },
    async taskWaits(link) {
      return liveTokens.includes(link.token);
    },
    async describeExecution(id) {
      const r = records[id];
      if (!r) throw new RuntimeError("ExecutionDoesNotExist", id);
      return r;
    },
    async stopExecution(id, options) {
      calls.push(["stop", id, options?.cause]);
      return records[id]!;
    },
    async sendTaskSuccess(token, output) {
      calls.push(["success", token, output]);
    },
    async sendTaskFailure(token, error, cause) {
      calls.push(["failure", token, error, cause]);
      if (token === "gone") throw new RuntimeError("TaskDoesNotExist", "answered");
    },
  };
  return { calls, links, runtime };
}

describe("settleChildren", () => {
  const link = (token: string): ChildLink => ({ parent: PARENT, token, pattern: "sync:2" });

  it("answers the parent's token when the child ended, and drops the link", async () => {
    const waiting = { [CHILD]: link("tok") };
    const { calls, links, runtime } = fixture({ [CHILD]: record() }, waiting);
    await settleChildren(
      links,
      () => runtime,
      (err) => {
        throw err;
      },
    );
    expect(calls).toEqual([["success", "tok", expect.objectContaining({ Output: { m: 2 } })]]);
    expect(waiting).toEqual({});
  });

  it("leaves a running child of a running parent alone", async () => {
    const waiting = { [CHILD]: link("tok") };
    const running = record({ status: "RUNNING", output: undefined, stoppedAt: undefined });
    const parent = { ...running, executionId: PARENT };
    const { calls, links, runtime } = fixture({ [CHILD]: running, [PARENT]: parent }, waiting);
    await settleChildren(
      links,
      () => runtime,
      (err) => {
        throw err;
      },
    );
    expect(calls).toEqual([]);
    expect(Object.keys(waiting)).toEqual([CHILD]);
  });

  it("stops a running child whose parent ended", async () => {
    const waiting = { [CHILD]: link("tok") };
    const running = record({ status: "RUNNING", output: undefined, stoppedAt: undefined });
    const parent = { ...running, executionId: PARENT, status: "ABORTED" as const };
    const { calls, links, runtime } = fixture({ [CHILD]: running, [PARENT]: parent }, waiting);
    await settleChildren(
      links,
      () => runtime,
      (err) => {
        throw err;
      },
    );
    expect(calls).toEqual([["stop", CHILD, parentTaskAbortedCause(PARENT)]]);
    expect(waiting).toEqual({});
  });

  it("stops a running child whose parent runs on but whose task no longer waits", async () => {
    // The task timed out (or a Parallel sibling failed): its token was withdrawn.
    const waiting = { [CHILD]: link("tok") };
    const running = record({ status: "RUNNING", output: undefined, stoppedAt: undefined });
    const parent = { ...running, executionId: PARENT };
    const { calls, links, runtime } = fixture({ [CHILD]: running, [PARENT]: parent }, waiting, []);
    await settleChildren(
      links,
      () => runtime,
      (err) => {
        throw err;
      },
    );
    expect(calls).toEqual([
      [
        "stop",
        CHILD,
        `The Task state in AWS Step Functions execution [${PARENT}] which was managing this resource was aborted`,
      ],
    ]);
    expect(waiting).toEqual({});
  });

  it("a token that no longer waits is no error; a vanished child fails the task", async () => {
    const waiting = { [CHILD]: link("gone") };
    const { calls, links, runtime } = fixture({}, waiting);
    await settleChildren(
      links,
      () => runtime,
      (err) => {
        throw err;
      },
    );
    expect(calls).toEqual([["failure", "gone", "States.TaskFailed", expect.any(String)]]);
    expect(waiting).toEqual({});
  });
});
