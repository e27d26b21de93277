import {
  CreateStateMachineCommand,
  DescribeStateMachineCommand,
  SFNClient,
  UpdateStateMachineCommand,
} from "@aws-sdk/client-sfn";
import { describe, expect, it } from "vitest";
import { defaultRoleArn } from "../../runtime/definitions/machine-create.js";
import { type Stack } from "../e2e/stack.js";
import { awsStackPerFile } from "./helpers.js";

/**
 * A definition is kept as it was sent and read back byte for byte (issue 36), as
 * Terraform's hashicorp/aws provider needs: it compares the text it sent with what
 * DescribeStateMachine returns, so a re-serialized definition is a perpetual diff.
 * Written as a `jsonencode`-free heredoc or read with `file()`, the text is
 * pretty-printed; `apply` then `plan` must find nothing to change. Comparisons
 * (an identical create, an update with an unchanged definition) still use the
 * canonical form.
 */
let stack: Stack;
let client: SFNClient;
const ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:";
const ROLE = "arn:aws:iam::123456789012:role/terraform";

/** As a heredoc in a .tf file holds it: two-space indent, trailing newline. */
const heredoc = `{
  "Comment": "written by hand",
  "StartAt": "Hello",
  "States": {
    "Hello": {
      "Type": "Pass",
      "Result": { "greeting": "hi" },
      "End": true
    }
  }
}
`;

awsStackPerFile((opened) => ({ stack, client } = opened));

async function described(name: string): Promise<string | undefined> {
  const out = await client.send(new DescribeStateMachineCommand({ stateMachineArn: ARN + name }));
  return out.definition;
}

describe("a definition as it was sent", () => {
  it("is what DescribeStateMachine returns, and an identical create (terraform apply again) is idempotent", async () => {
    const first = await client.send(
      new CreateStateMachineCommand({ name: "tf-pretty", definition: heredoc, roleArn: ROLE }),
    );
    expect(await described("tf-pretty")).toBe(heredoc);
    const again = await client.send(
      new CreateStateMachineCommand({ name: "tf-pretty", definition: heredoc, roleArn: ROLE }),
    );
    expect(again.stateMachineArn).toBe(first.stateMachineArn);
    expect(again.creationDate).toEqual(first.creationDate);
    expect(await described("tf-pretty")).toBe(heredoc);
  });

  it("follows an update: the new text is returned, and the same text again makes no version", async () => {
    await client.send(
      new CreateStateMachineCommand({ name: "tf-update", definition: heredoc, roleArn: ROLE }),
    );
    const changed = heredoc.replace('"hi"', '"hello"');
    const updated = await client.send(
      new UpdateStateMachineCommand({ stateMachineArn: ARN + "tf-update", definition: changed }),
    );
    expect(await described("tf-update")).toBe(changed);
    const same = await client.send(
      new UpdateStateMachineCommand({ stateMachineArn: ARN + "tf-update", definition: changed }),
    );
    expect(same.revisionId).toBe(updated.revisionId);
  });

  it("is kept for REST too: YAML posted as YAML is returned as definitionText, byte for byte", async () => {
    const yaml =
      "# a comment that JSON could not keep\nStartAt: A\nStates:\n  A:\n    Type: Succeed\n";
    const created = await stack.client.call("POST", "/v1/state-machines?name=rest-yaml", {
      raw: yaml,
      contentType: "application/yaml",
    });
    expect(created.status).toBe(201);
    const got = await stack.client.call("GET", "/v1/state-machines/rest-yaml");
    expect(got.body.definitionText).toBe(yaml);
    expect(got.body.definition).toEqual({ StartAt: "A", States: { A: { Type: "Succeed" } } });
    // Through the AWS API the same machine reads as the text it was created from.
    expect(await described("rest-yaml")).toBe(yaml);
  });

  it("created through AWS from pretty-printed JSON, REST's GET returns the same bytes", async () => {
    await client.send(
      new CreateStateMachineCommand({ name: "tf-rest-read", definition: heredoc, roleArn: ROLE }),
    );
    const got = await stack.client.call("GET", "/v1/state-machines/tf-rest-read");
    expect(got.status).toBe(200);
    expect(got.body.definitionText).toBe(heredoc);
    expect(got.body.definition).toEqual(JSON.parse(heredoc));
  });

  it("posted to REST as pretty-printed JSON text, both APIs return it byte for byte", async () => {
    const created = await stack.client.call("POST", "/v1/state-machines", {
      body: { name: "rest-pretty", definition: heredoc },
    });
    expect(created.status).toBe(201);
    const got = await stack.client.call("GET", "/v1/state-machines/rest-pretty");
    expect(got.body.definitionText).toBe(heredoc);
    expect(await described("rest-pretty")).toBe(heredoc);
    // The same create again through AWS (Terraform importing what REST made) is idempotent;
    // REST gave no role, so the machine has the default one.
    const again = await client.send(
      new CreateStateMachineCommand({
        name: "rest-pretty",
        definition: heredoc,
        roleArn: defaultRoleArn(),
      }),
    );
    expect(again.stateMachineArn).toBe(ARN + "rest-pretty");
    expect(await described("rest-pretty")).toBe(heredoc);
  });

  it("is the definition's JSON when it was sent as an object", async () => {
    const definition = { StartAt: "A", States: { A: { Type: "Succeed" } } };
    await stack.client.call("POST", "/v1/state-machines", {
      body: { name: "rest-object", definition },
    });
    const got = await stack.client.call("GET", "/v1/state-machines/rest-object");
    expect(got.body.definitionText).toBeUndefined();
    expect(await described("rest-object")).toBe(JSON.stringify(definition));
  });
});
