import { SFNClient, TestStateCommand } from "@aws-sdk/client-sfn";
import { describe, expect, it } from "vitest";
import { type Stack } from "../e2e/stack.js";
import { failure, awsStackPerFile } from "./helpers.js";

let stack: Stack;
let client: SFNClient;

awsStackPerFile((opened) => ({ stack, client } = opened));

describe("TestState through the AWS SDK", () => {
  it("shows a Pass state's pipeline at DEBUG", async () => {
    const out = await client.send(
      new TestStateCommand({
        definition: JSON.stringify({
          Type: "Pass",
          InputPath: "$.order",
          Parameters: { "id.$": "$.id", "twice.$": "States.MathAdd($.n, $.n)" },
          ResultPath: "$.summary",
          Next: "Ship",
        }),
        input: JSON.stringify({ order: { id: "o-1", n: 2 }, other: true }),
        inspectionLevel: "DEBUG",
      }),
    );
    expect(out).toMatchObject({ status: "SUCCEEDED", nextState: "Ship" });
    expect(JSON.parse(out.output!)).toEqual({
      order: { id: "o-1", n: 2 },
      other: true,
      summary: { id: "o-1", twice: 4 },
    });
    const data = out.inspectionData!;
    expect(JSON.parse(data.afterInputPath!)).toEqual({ id: "o-1", n: 2 });
    expect(JSON.parse(data.afterParameters!)).toEqual({ id: "o-1", twice: 4 });
    expect(JSON.parse(data.result!)).toEqual({ id: "o-1", twice: 4 });
    expect(JSON.parse(data.afterResultPath!)).toEqual(JSON.parse(out.output!));
  });

  it("runs a Task state on its mocked result, and its Catch on a mocked error", async () => {
    const task = {
      Type: "Task",
      Resource: "arn:aws:states:::lambda:invoke",
      Parameters: { FunctionName: "charge", "Payload.$": "$" },
      ResultSelector: { "paid.$": "$.Payload.ok" },
      ResultPath: "$.payment",
      Catch: [{ ErrorEquals: ["Declined"], Next: "Refuse" }],
      Next: "Done",
    };
    const ok = await client.send(
      new TestStateCommand({
        definition: JSON.stringify(task),
        input: '{"amount":5}',
        inspectionLevel: "DEBUG",
        mock: { result: '{"Payload":{"ok":true}}' },
      }),
    );
    expect(ok).toMatchObject({ status: "SUCCEEDED", nextState: "Done" });
    expect(JSON.parse(ok.output!)).toEqual({ amount: 5, payment: { paid: true } });
    const data = ok.inspectionData!;
    expect(JSON.parse(data.afterParameters!)).toEqual({
      FunctionName: "charge",
      Payload: { amount: 5 },
    });
    expect(JSON.parse(data.result!)).toEqual({ Payload: { ok: true } });
    expect(JSON.parse(data.afterResultSelector!)).toEqual({ paid: true });
    expect(JSON.parse(data.afterResultPath!)).toEqual({ amount: 5, payment: { paid: true } });

    const caught = await client.send(
      new TestStateCommand({
        definition: JSON.stringify(task),
        input: '{"amount":5}',
        mock: { errorOutput: { error: "Declined", cause: "card" } },
      }),
    );
    expect(caught).toMatchObject({
      status: "CAUGHT_ERROR",
      nextState: "Refuse",
      error: "Declined",
    });
    const failed = await client.send(
      new TestStateCommand({
        definition: JSON.stringify(task),
        mock: { errorOutput: { error: "Other" } },
      }),
    );
    expect(failed).toMatchObject({ status: "FAILED", error: "Other" });
    expect(failed.inspectionData).toBeUndefined();
  });

  it("picks a state of a machine, and refuses what it cannot test", async () => {
    const choice = await client.send(
      new TestStateCommand({
        definition: JSON.stringify({
          StartAt: "A",
          States: {
            A: { Type: "Pass", Next: "C" },
            C: {
              Type: "Choice",
              Choices: [{ Variable: "$.n", NumericGreaterThan: 1, Next: "Big" }],
              Default: "Small",
            },
            Big: { Type: "Succeed" },
            Small: { Type: "Succeed" },
          },
        }),
        stateName: "C",
        input: '{"n":3}',
      }),
    );
    expect(choice).toMatchObject({ status: "SUCCEEDED", nextState: "Big" });
    expect(
      await failure(client.send(new TestStateCommand({ definition: '{"Type":"Nope"}' }))),
    ).toMatchObject({ name: "InvalidDefinition" });
    expect(
      await failure(
        client.send(
          new TestStateCommand({
            // Without a mock TestState calls the resource (test-state-calls.test.ts), but
            // not one that answers later: AWS needs a mock for .waitForTaskToken and .sync.
            definition:
              '{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","End":true}',
          }),
        ),
      ),
    ).toMatchObject({ name: "ValidationException" });
  });

  it("answers the same through REST", async () => {
    const reply = await stack.client.post("/v1/state-machines/test-state", {
      definition: { Type: "Pass", Result: { x: 1 }, ResultPath: "$.r", End: true },
      input: { a: 1 },
      inspectionLevel: "DEBUG",
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: "SUCCEEDED",
      output: { a: 1, r: { x: 1 } },
      inspectionData: { result: { x: 1 }, afterResultPath: { a: 1, r: { x: 1 } } },
    });
  });
});
