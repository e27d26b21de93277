import {
  CreateStateMachineCommand,
  DescribeStateMachineCommand,
  ListStateMachineVersionsCommand,
  ListTagsForResourceCommand,
  PublishStateMachineVersionCommand,
  SFNClient,
  UpdateStateMachineCommand,
  type CreateStateMachineCommandInput,
} from "@aws-sdk/client-sfn";
import { describe, expect, it } from "vitest";
import { type Stack } from "../e2e/stack.js";
import { failure, awsStackPerFile } from "./helpers.js";

/**
 * CreateStateMachine's idempotency, decided by the runtime (runtime/definitions/
 * machine-create.ts) in one call: the same create again answers the existing machine,
 * applying its tags and publication once; the same name with anything else is
 * StateMachineAlreadyExists. REST's POST goes on refusing any existing name.
 */
let stack: Stack;
let client: SFNClient;
const ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:";
const ROLE = "arn:aws:iam::123456789012:role/x";

awsStackPerFile((opened) => ({ stack, client } = opened));

const definition = {
  StartAt: "P",
  States: { P: { Type: "Pass", Result: { ok: true }, End: true } },
};
const compact = JSON.stringify(definition);
/** The same definition as another tool writes it: pretty-printed, its keys in another order. */
const pretty = JSON.stringify(
  { States: { P: { End: true, Result: { ok: true }, Type: "Pass" } }, StartAt: "P" },
  null,
  2,
);

/** The SDK's input; `roleArn` is optional here (a machine without one reports the default role). */
type CreateInput = CreateStateMachineCommandInput;

function create(input: Partial<CreateStateMachineCommandInput> & { name: string }) {
  return client.send(
    new CreateStateMachineCommand({ definition: compact, roleArn: ROLE, ...input }),
  );
}

async function tagsOf(name: string): Promise<unknown> {
  const listed = await client.send(new ListTagsForResourceCommand({ resourceArn: ARN + name }));
  return listed.tags;
}

async function versionsOf(name: string): Promise<string[]> {
  const listed = await client.send(
    new ListStateMachineVersionsCommand({ stateMachineArn: ARN + name }),
  );
  return listed.stateMachineVersions!.map((v) => v.stateMachineVersionArn!);
}

async function revisionOf(name: string): Promise<string | undefined> {
  const described = await client.send(
    new DescribeStateMachineCommand({ stateMachineArn: ARN + name }),
  );
  return described.revisionId;
}

describe("CreateStateMachine is idempotent", () => {
  it("the same create again, pretty-printed: the same machine and version, tags and publish once", async () => {
    const first = await create({
      name: "idem",
      tags: [{ key: "team", value: "a" }],
      publish: true,
      versionDescription: "first",
    });
    expect(first.stateMachineArn).toBe(`${ARN}idem`);
    expect(first.stateMachineVersionArn).toBe(`${ARN}idem:1`);

    const again = await create({
      name: "idem",
      definition: pretty,
      tags: [
        { key: "team", value: "b" },
        { key: "other", value: "x" },
      ],
      publish: true,
      versionDescription: "first",
    });
    expect(again).toMatchObject({
      stateMachineArn: first.stateMachineArn,
      stateMachineVersionArn: first.stateMachineVersionArn,
      creationDate: first.creationDate,
    });
    expect(await tagsOf("idem")).toEqual([{ key: "team", value: "a" }]);
    expect(await versionsOf("idem")).toEqual([`${ARN}idem:1`]);
    expect(await revisionOf("idem")).toBe("1");

    // Without the role (AWS requires one; Stepwise does not) or the publication: the same machine.
    const plain = await client.send(
      new CreateStateMachineCommand({ name: "idem", definition: pretty } as CreateInput),
    );
    expect(plain).toMatchObject({
      stateMachineArn: `${ARN}idem`,
      creationDate: first.creationDate,
    });
    expect(plain.stateMachineVersionArn).toBeUndefined();
    expect(await versionsOf("idem")).toEqual([`${ARN}idem:1`]);
  });

  it("the same name with anything else: StateMachineAlreadyExists, nothing changed", async () => {
    await create({ name: "taken", tags: [{ key: "team", value: "a" }] });
    const other = JSON.stringify({ StartAt: "S", States: { S: { Type: "Succeed" } } });
    const conflicts: Partial<CreateStateMachineCommandInput>[] = [
      { definition: other },
      { type: "EXPRESS" },
      { roleArn: "arn:aws:iam::123456789012:role/other" },
      // The first create published nothing: a publishing create is another.
      { publish: true },
    ];
    for (const input of conflicts) {
      expect(
        await failure(create({ name: "taken", tags: [{ key: "t", value: "1" }], ...input })),
        JSON.stringify(input),
      ).toEqual({
        name: "StateMachineAlreadyExists",
        message: `State Machine Already Exists: '${ARN}taken'`,
        status: 400,
      });
    }
    expect(await revisionOf("taken")).toBe("1");
    expect(await versionsOf("taken")).toEqual([]);
    expect(await tagsOf("taken")).toEqual([{ key: "team", value: "a" }]);

    // Once version 1 is published: the create asking for it, with its description, is the same.
    await client.send(
      new PublishStateMachineVersionCommand({ stateMachineArn: `${ARN}taken`, description: "d" }),
    );
    expect(
      (await failure(create({ name: "taken", publish: true, versionDescription: "e" }))).name,
    ).toBe("StateMachineAlreadyExists");
    expect(
      (await create({ name: "taken", publish: true, versionDescription: "d" }))
        .stateMachineVersionArn,
    ).toBe(`${ARN}taken:1`);

    // After an update, the create compares with the latest definition.
    await client.send(
      new UpdateStateMachineCommand({ stateMachineArn: `${ARN}taken`, definition: other }),
    );
    expect((await failure(create({ name: "taken" }))).name).toBe("StateMachineAlreadyExists");
    expect((await create({ name: "taken", definition: other })).stateMachineArn).toBe(
      `${ARN}taken`,
    );
    expect(await revisionOf("taken")).toBe("2");
  });

  it("creates sent at once, as a retry may be: one machine, one version, one publication", async () => {
    const all = await Promise.all(
      Array.from({ length: 6 }, () =>
        create({ name: "raced", tags: [{ key: "k", value: "v" }], publish: true }),
      ),
    );
    expect(new Set(all.map((c) => c.creationDate?.getTime())).size).toBe(1);
    expect(new Set(all.map((c) => c.stateMachineVersionArn))).toEqual(new Set([`${ARN}raced:1`]));
    expect(await revisionOf("raced")).toBe("1");
    expect(await versionsOf("raced")).toEqual([`${ARN}raced:1`]);
    expect(await tagsOf("raced")).toEqual([{ key: "k", value: "v" }]);
  });
});

describe("REST's create is unchanged: an existing name is 409 however identical", () => {
  it("refuses the identical definition as it refuses another", async () => {
    const { client: rest } = stack;
    const created = await rest.post("/v1/state-machines", { name: "rest-made", definition });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "rest-made", version: 1 });
    for (const body of [
      { name: "rest-made", definition },
      { name: "rest-made", definition: JSON.parse(pretty) },
      { name: "rest-made", definition: { StartAt: "S", States: { S: { Type: "Succeed" } } } },
    ]) {
      const again = await rest.post("/v1/state-machines", body);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({
        error: "StateMachineAlreadyExists",
        message: "State machine 'rest-made' already exists",
      });
    }
    const raced = await Promise.all(
      Array.from({ length: 5 }, () =>
        rest.post("/v1/state-machines", { name: "rest-raced", definition }),
      ),
    );
    expect(raced.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);

    // The machine REST made, created again through AWS as it is: the same machine
    // (it has no role: it reports the default one, which a create may name).
    expect(
      (
        await client.send(
          new CreateStateMachineCommand({ name: "rest-made", definition: pretty } as CreateInput),
        )
      ).stateMachineArn,
    ).toBe(`${ARN}rest-made`);
    expect(
      (
        await client.send(
          new CreateStateMachineCommand({
            name: "rest-made",
            definition: compact,
            roleArn: "arn:aws:iam::123456789012:role/stepwise",
          }),
        )
      ).stateMachineArn,
    ).toBe(`${ARN}rest-made`);
    expect((await failure(create({ name: "rest-made" }))).name).toBe("StateMachineAlreadyExists");
  });
});
