import {
  CreateStateMachineCommand,
  DeleteStateMachineCommand,
  DescribeStateMachineCommand,
  ListStateMachinesCommand,
  SFNClient,
  UpdateStateMachineCommand,
  ValidateStateMachineDefinitionCommand,
} from "@aws-sdk/client-sfn";
import { describe, expect, it } from "vitest";
import { type Stack } from "../e2e/stack.js";
import { PASS, RUNNER, failure, sfn, awsStackPerFile } from "./helpers.js";

let stack: Stack;
let client: SFNClient;
const ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:";

awsStackPerFile((opened) => ({ stack, client } = opened));

describe("state machines through the AWS SDK", () => {
  it("creates, describes, updates, lists and deletes", async () => {
    const created = await client.send(
      new CreateStateMachineCommand({
        name: "sm-one",
        definition: PASS,
        roleArn: "arn:aws:iam::123456789012:role/x",
        tags: [{ key: "team", value: "a" }],
      }),
    );
    expect(created.stateMachineArn).toBe(`${ARN}sm-one`);
    expect(created.creationDate).toBeInstanceOf(Date);
    expect(Math.abs(created.creationDate!.getTime() - Date.now())).toBeLessThan(60_000);
    expect(created.stateMachineVersionArn).toBeUndefined();

    // The same create again is idempotent; another definition conflicts.
    const again = await client.send(
      new CreateStateMachineCommand({
        name: "sm-one",
        definition: PASS,
        roleArn: "arn:aws:iam::123456789012:role/x",
      }),
    );
    expect(again.stateMachineArn).toBe(created.stateMachineArn);
    const other = JSON.stringify({ StartAt: "S", States: { S: { Type: "Succeed" } } });
    expect(
      await failure(
        client.send(
          new CreateStateMachineCommand({ name: "sm-one", definition: other, roleArn: "r" }),
        ),
      ),
    ).toMatchObject({ name: "StateMachineAlreadyExists", status: 400 });

    const described = await client.send(
      new DescribeStateMachineCommand({ stateMachineArn: created.stateMachineArn }),
    );
    expect(described).toMatchObject({
      stateMachineArn: `${ARN}sm-one`,
      name: "sm-one",
      status: "ACTIVE",
      type: "STANDARD",
      roleArn: "arn:aws:iam::123456789012:role/x",
      revisionId: "1",
    });
    expect(JSON.parse(described.definition!)).toEqual(JSON.parse(PASS));

    const updated = await client.send(
      new UpdateStateMachineCommand({
        stateMachineArn: created.stateMachineArn,
        definition: other,
        publish: true,
        versionDescription: "second",
      }),
    );
    expect(updated.revisionId).toBe("2");
    expect(updated.stateMachineVersionArn).toBe(`${ARN}sm-one:2`);
    expect(updated.updateDate).toBeInstanceOf(Date);
    const version = await client.send(
      new DescribeStateMachineCommand({ stateMachineArn: updated.stateMachineVersionArn }),
    );
    expect(version).toMatchObject({ stateMachineArn: `${ARN}sm-one:2`, description: "second" });

    const published = await client.send(
      new CreateStateMachineCommand({
        name: "sm-two",
        definition: PASS,
        roleArn: "r",
        type: "EXPRESS",
        publish: true,
      }),
    );
    expect(published.stateMachineVersionArn).toBe(`${ARN}sm-two:1`);

    const listed = await client.send(new ListStateMachinesCommand({ maxResults: 1 }));
    expect(listed.stateMachines).toHaveLength(1);
    expect(listed.stateMachines![0]).toMatchObject({ name: "sm-one", type: "STANDARD" });
    const rest = await client.send(new ListStateMachinesCommand({ nextToken: listed.nextToken }));
    expect(rest.stateMachines!.map((m) => [m.name, m.type])).toEqual([["sm-two", "EXPRESS"]]);
    expect(rest.nextToken).toBeUndefined();

    await client.send(new DeleteStateMachineCommand({ stateMachineArn: `${ARN}sm-two` }));
    expect(
      await failure(
        client.send(new DescribeStateMachineCommand({ stateMachineArn: `${ARN}sm-two` })),
      ),
    ).toMatchObject({ name: "StateMachineDoesNotExist" });
    // Deleting again succeeds; recreating does not reuse version numbers.
    await client.send(new DeleteStateMachineCommand({ stateMachineArn: `${ARN}sm-two` }));
    await client.send(
      new CreateStateMachineCommand({ name: "sm-two", definition: PASS, roleArn: "r" }),
    );
    const recreated = await client.send(
      new DescribeStateMachineCommand({ stateMachineArn: `${ARN}sm-two` }),
    );
    expect(recreated).toMatchObject({ type: "STANDARD", revisionId: "2" });
  });

  it("answers bad input with AWS's exceptions, naming the field", async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ name: "bad name!", definition: PASS, roleArn: "r" }, "InvalidName", /bad name/],
      [
        { name: "x", definition: "{", roleArn: "r" },
        "InvalidDefinition",
        /Invalid State Machine Definition/,
      ],
      [
        { name: "x", definition: '{"StartAt":"A","States":{}}', roleArn: "r" },
        "InvalidDefinition",
        /A/,
      ],
      [
        { name: "x", definition: PASS, roleArn: "r", type: "FAST" },
        "ValidationException",
        /'type'/,
      ],
      [{ name: "x", roleArn: "r" }, "ValidationException", /'definition'/],
      [
        { name: "x", definition: PASS, versionDescription: "v" },
        "ValidationException",
        /versionDescription/,
      ],
    ];
    for (const [input, name, message] of cases) {
      const f = await failure(client.send(new CreateStateMachineCommand(input as never)));
      expect(f.name, JSON.stringify(input)).toBe(name);
      expect(f.message).toMatch(message);
    }
    expect(
      await failure(client.send(new DescribeStateMachineCommand({ stateMachineArn: "nope" }))),
    ).toMatchObject({ name: "InvalidArn" });
    expect(
      await failure(
        client.send(new DescribeStateMachineCommand({ stateMachineArn: `${ARN}missing` })),
      ),
    ).toMatchObject({ name: "StateMachineDoesNotExist" });
  });

  it("validates definitions with AWS's diagnostics", async () => {
    const ok = await client.send(new ValidateStateMachineDefinitionCommand({ definition: PASS }));
    expect(ok).toEqual(
      expect.objectContaining({ result: "OK", diagnostics: [], truncated: false }),
    );
    const bad = await client.send(
      new ValidateStateMachineDefinitionCommand({
        definition: JSON.stringify({ StartAt: "A", States: { B: { Type: "Pass", Next: "C" } } }),
        maxResults: 1,
      }),
    );
    expect(bad.result).toBe("FAIL");
    expect(bad.diagnostics).toHaveLength(1);
    expect(bad.diagnostics![0]).toMatchObject({ severity: "ERROR" });
    expect(bad.diagnostics![0]!.location).toMatch(/^\//);
    expect(bad.truncated).toBe(true);
  });

  it("checks the signature, the key and its scope", async () => {
    const wrong = sfn(stack, { id: "ops", secret: "not-the-secret-0123456789" });
    expect(await failure(wrong.send(new ListStateMachinesCommand({})))).toMatchObject({
      name: "InvalidSignatureException",
    });
    const unknown = sfn(stack, { id: "nobody", secret: "whatever-0123456789abc" });
    expect(await failure(unknown.send(new ListStateMachinesCommand({})))).toMatchObject({
      name: "UnrecognizedClientException",
    });
    const runner = sfn(stack, RUNNER);
    await runner.send(new ListStateMachinesCommand({}));
    expect(
      await failure(
        runner.send(new CreateStateMachineCommand({ name: "x", definition: PASS, roleArn: "r" })),
      ),
    ).toMatchObject({ name: "AccessDeniedException" });
    // Any region signs; the ARNs stay the deployment's.
    const elsewhere = sfn(stack, undefined, "eu-west-3");
    const page = await elsewhere.send(new ListStateMachinesCommand({}));
    expect(page.stateMachines!.every((m) => m.stateMachineArn!.startsWith(ARN))).toBe(true);
    for (const c of [wrong, unknown, runner, elsewhere]) c.destroy();
  });
});
