import {
  CreateStateMachineAliasCommand,
  CreateStateMachineCommand,
  DeleteStateMachineAliasCommand,
  DeleteStateMachineVersionCommand,
  DescribeExecutionCommand,
  DescribeStateMachineAliasCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  ListStateMachineAliasesCommand,
  ListStateMachineVersionsCommand,
  PublishStateMachineVersionCommand,
  SFNClient,
  StartExecutionCommand,
  UpdateStateMachineAliasCommand,
  UpdateStateMachineCommand,
  type ListExecutionsCommandOutput,
} from "@aws-sdk/client-sfn";
import { describe, expect, it } from "vitest";
import { type Stack } from "../e2e/stack.js";
import { failure, awsStackPerFile } from "./helpers.js";

let stack: Stack;
let client: SFNClient;
const SM = "arn:aws:states:us-east-1:123456789012:stateMachine:";

awsStackPerFile((opened) => ({ stack, client } = opened));

const pass = (v: number) =>
  JSON.stringify({ StartAt: "P", States: { P: { Type: "Pass", Result: v, End: true } } });

/** Every execution listed under an ARN (a machine, a version or an alias). */
async function countUnder(stateMachineArn: string): Promise<number> {
  let n = 0;
  let nextToken: string | undefined;
  do {
    const page: ListExecutionsCommandOutput = await client.send(
      new ListExecutionsCommand({ stateMachineArn, maxResults: 1000, nextToken }),
    );
    n += page.executions!.length;
    nextToken = page.nextToken;
  } while (nextToken);
  return n;
}

describe("versions and aliases through the AWS SDK", () => {
  it("publishes, lists and deletes versions; starts a version", async () => {
    const { stateMachineArn } = await client.send(
      new CreateStateMachineCommand({
        name: "v",
        definition: pass(1),
        roleArn: "r",
        publish: true,
      }),
    );
    await client.send(new UpdateStateMachineCommand({ stateMachineArn, definition: pass(2) }));
    const v2 = await client.send(
      new PublishStateMachineVersionCommand({
        stateMachineArn,
        description: "two",
        revisionId: "2",
      }),
    );
    expect(v2.stateMachineVersionArn).toBe(`${SM}v:2`);
    // Republishing the same revision answers the same version.
    const again = await client.send(new PublishStateMachineVersionCommand({ stateMachineArn }));
    expect(again.stateMachineVersionArn).toBe(`${SM}v:2`);
    expect(
      await failure(
        client.send(new PublishStateMachineVersionCommand({ stateMachineArn, revisionId: "1" })),
      ),
    ).toMatchObject({ name: "ConflictException" });
    const listed = await client.send(new ListStateMachineVersionsCommand({ stateMachineArn }));
    expect(listed.stateMachineVersions!.map((v) => v.stateMachineVersionArn)).toEqual([
      `${SM}v:2`,
      `${SM}v:1`,
    ]);

    await client.send(new UpdateStateMachineCommand({ stateMachineArn, definition: pass(3) }));
    const onV1 = await client.send(new StartExecutionCommand({ stateMachineArn: `${SM}v:1` }));
    const latest = await client.send(new StartExecutionCommand({ stateMachineArn }));
    for (const [arn, output, version] of [
      [onV1.executionArn!, "1", `${SM}v:1`],
      [latest.executionArn!, "3", undefined],
    ] as const) {
      let d = await client.send(new DescribeExecutionCommand({ executionArn: arn }));
      while (d.status === "RUNNING")
        d = await client.send(new DescribeExecutionCommand({ executionArn: arn }));
      expect(d.output).toBe(output);
      expect(d.stateMachineVersionArn).toBe(version);
    }
    const history = await client.send(
      new GetExecutionHistoryCommand({ executionArn: onV1.executionArn }),
    );
    expect(history.events![0]!.executionStartedEventDetails).toMatchObject({
      stateMachineVersionArn: `${SM}v:1`,
    });
    // Version 3 was never published.
    expect(
      await failure(client.send(new StartExecutionCommand({ stateMachineArn: `${SM}v:3` }))),
    ).toMatchObject({ name: "StateMachineDoesNotExist" });

    await client.send(new DeleteStateMachineVersionCommand({ stateMachineVersionArn: `${SM}v:1` }));
    const after = await client.send(new ListStateMachineVersionsCommand({ stateMachineArn }));
    expect(after.stateMachineVersions!.map((v) => v.stateMachineVersionArn)).toEqual([`${SM}v:2`]);
  });

  it("routes an alias 80/20 over two versions and records each pick", async () => {
    const { stateMachineArn } = await client.send(
      new CreateStateMachineCommand({
        name: "split",
        definition: pass(1),
        roleArn: "r",
        publish: true,
      }),
    );
    await client.send(
      new UpdateStateMachineCommand({ stateMachineArn, definition: pass(2), publish: true }),
    );
    const routing = [
      { stateMachineVersionArn: `${stateMachineArn}:1`, weight: 80 },
      { stateMachineVersionArn: `${stateMachineArn}:2`, weight: 20 },
    ];
    const alias = await client.send(
      new CreateStateMachineAliasCommand({
        name: "live",
        description: "prod",
        routingConfiguration: routing,
      }),
    );
    expect(alias.stateMachineAliasArn).toBe(`${SM}split:live`);
    // Idempotent with the same settings; a conflict with others.
    await client.send(
      new CreateStateMachineAliasCommand({
        name: "live",
        description: "prod",
        routingConfiguration: routing,
      }),
    );
    expect(
      await failure(
        client.send(
          new CreateStateMachineAliasCommand({
            name: "live",
            routingConfiguration: routing.slice(0, 1),
          }),
        ),
      ),
    ).toMatchObject({ name: "ValidationException" });
    expect(
      await failure(
        client.send(
          new CreateStateMachineAliasCommand({
            name: "live",
            routingConfiguration: [{ stateMachineVersionArn: `${stateMachineArn}:1`, weight: 100 }],
          }),
        ),
      ),
    ).toMatchObject({ name: "ConflictException" });
    expect(
      await client.send(
        new DescribeStateMachineAliasCommand({ stateMachineAliasArn: alias.stateMachineAliasArn }),
      ),
    ).toMatchObject({ name: "live", description: "prod", routingConfiguration: routing });

    const starts = 1000;
    for (let i = 0; i < starts; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, () =>
          client.send(new StartExecutionCommand({ stateMachineArn: alias.stateMachineAliasArn })),
        ),
      );
    }
    const onV1 = await countUnder(`${stateMachineArn}:1`);
    const onV2 = await countUnder(`${stateMachineArn}:2`);
    expect(onV1 + onV2).toBe(starts);
    expect(await countUnder(alias.stateMachineAliasArn!)).toBe(starts);
    expect(Math.abs(onV1 / starts - 0.8)).toBeLessThanOrEqual(0.05);

    const sample = await client.send(
      new ListExecutionsCommand({ stateMachineArn: alias.stateMachineAliasArn, maxResults: 1 }),
    );
    const described = await client.send(
      new DescribeExecutionCommand({ executionArn: sample.executions![0]!.executionArn }),
    );
    expect(described.stateMachineAliasArn).toBe(alias.stateMachineAliasArn);
    expect([`${stateMachineArn}:1`, `${stateMachineArn}:2`]).toContain(
      described.stateMachineVersionArn,
    );

    // A routed version may not be deleted.
    expect(
      await failure(
        client.send(
          new DeleteStateMachineVersionCommand({ stateMachineVersionArn: `${stateMachineArn}:2` }),
        ),
      ),
    ).toMatchObject({ name: "ConflictException" });
    await client.send(
      new UpdateStateMachineAliasCommand({
        stateMachineAliasArn: alias.stateMachineAliasArn,
        routingConfiguration: [{ stateMachineVersionArn: `${stateMachineArn}:1`, weight: 100 }],
      }),
    );
    await client.send(
      new DeleteStateMachineVersionCommand({ stateMachineVersionArn: `${stateMachineArn}:2` }),
    );
    const aliases = await client.send(new ListStateMachineAliasesCommand({ stateMachineArn }));
    expect(aliases.stateMachineAliases!.map((a) => a.stateMachineAliasArn)).toEqual([
      `${SM}split:live`,
    ]);
    await client.send(
      new DeleteStateMachineAliasCommand({ stateMachineAliasArn: alias.stateMachineAliasArn }),
    );
    expect(
      await failure(
        client.send(
          new DescribeStateMachineAliasCommand({
            stateMachineAliasArn: alias.stateMachineAliasArn,
          }),
        ),
      ),
    ).toMatchObject({ name: "ResourceNotFound" });
    expect(
      await failure(
        client.send(
          new CreateStateMachineAliasCommand({
            name: "bad",
            routingConfiguration: [{ stateMachineVersionArn: `${stateMachineArn}:1`, weight: 70 }],
          }),
        ),
      ),
    ).toMatchObject({ name: "ValidationException" });
  });
});

describe("the same through the REST API", () => {
  it("publishes, aliases, starts on a version or alias, and deletes", async () => {
    const rest = stack.client;
    const def = (v: number) => JSON.parse(pass(v)) as unknown;
    expect((await rest.post("/v1/state-machines", { name: "r", definition: def(1) })).status).toBe(
      201,
    );
    expect((await rest.post("/v1/state-machines/r/versions", { description: "one" })).status).toBe(
      201,
    );
    await rest.put("/v1/state-machines/r", { definition: def(2) });
    expect((await rest.post("/v1/state-machines/r/versions", {})).body).toMatchObject({
      version: 2,
    });
    expect(
      (await rest.get("/v1/state-machines/r/versions")).body.items.map(
        (v: { version: number }) => v.version,
      ),
    ).toEqual([2, 1]);

    const onV1 = await rest.post("/v1/state-machines/r/executions?version=1&wait=10", {});
    expect(onV1.body).toMatchObject({ status: "SUCCEEDED", output: 1 });
    const record = await rest.get(`/v1/executions/${encodeURIComponent(onV1.body.executionId)}`);
    expect(record.body).toMatchObject({ version: 1, pinnedVersion: 1 });
    expect((await rest.post("/v1/state-machines/r/executions?version=9", {})).status).toBe(404);

    const alias = await rest.post("/v1/state-machines/r/aliases", {
      name: "stable",
      routing: [{ version: 1, weight: 100 }],
    });
    expect(alias.status).toBe(201);
    const viaAlias = await rest.post("/v1/state-machines/r/executions?alias=stable&wait=10", {});
    expect(viaAlias.body).toMatchObject({ status: "SUCCEEDED", output: 1 });
    const aliased = await rest.get(
      `/v1/executions/${encodeURIComponent(viaAlias.body.executionId)}`,
    );
    expect(aliased.body).toMatchObject({ pinnedVersion: 1, alias: "stable" });
    expect(
      (
        await rest.call("PATCH", "/v1/state-machines/r/aliases/stable", {
          body: { routing: [{ version: 1, weight: 50 }] },
        })
      ).body,
    ).toMatchObject({ error: "InvalidRoutingConfiguration" });
    expect((await rest.call("DELETE", "/v1/state-machines/r/versions/1")).status).toBe(409);

    expect((await rest.post("/v1/activities", { name: "act" })).status).toBe(201);
    expect(
      (await rest.call("PATCH", "/v1/activities/act/tags", { body: { a: "1" } })).body,
    ).toEqual({ a: "1" });

    expect((await rest.call("DELETE", "/v1/state-machines/r")).status).toBe(204);
    expect((await rest.get("/v1/state-machines/r")).status).toBe(404);
  });
});
