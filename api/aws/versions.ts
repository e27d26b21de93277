import type { AliasRoute, StateMachineAlias } from "../../runtime/contract/index.js";
import { RuntimeError } from "../../runtime/contract/index.js";
import { isValidAliasName } from "../../runtime/definitions/aliases.js";
import { stateMachineArn } from "../../runtime/store/ids.js";
import { parseStateMachineArn, unqualifiedStateMachine } from "./arns.js";
import { awsError, invalidField } from "./errors.js";
import {
  epochSeconds,
  nextToken,
  optionalString,
  pageSize,
  requiredString,
  type Body,
} from "./fields.js";
import type { ActionTable, AwsContext } from "./protocol.js";
import { ours } from "./state-machines.js";

/**
 * Versions (PublishStateMachineVersion, ListStateMachineVersions,
 * DeleteStateMachineVersion) and aliases (Create/Describe/Update/Delete/
 * ListStateMachineAliases). A version ARN is `…:stateMachine:<name>:<n>`, an alias
 * ARN `…:stateMachine:<name>:<alias>`.
 */

async function publish(body: Body, ctx: AwsContext): Promise<unknown> {
  const { name } = ours(unqualifiedStateMachine(requiredString(body, "stateMachineArn")));
  const revisionId = optionalString(body, "revisionId", { max: 256 });
  const description = optionalString(body, "description", { max: 256 });
  let expectedVersion: number | undefined;
  if (revisionId !== undefined) {
    expectedVersion = /^[1-9]\d{0,9}$/.test(revisionId) ? Number(revisionId) : -1;
  }
  const published = await ctx.runtime.publishStateMachineVersion(name, {
    ...(description !== undefined ? { description } : {}),
    ...(expectedVersion !== undefined ? { expectedVersion } : {}),
  });
  return {
    stateMachineVersionArn: stateMachineArn(name, published.version),
    creationDate: epochSeconds(published.publishedAt),
  };
}

async function listVersions(body: Body, ctx: AwsContext): Promise<unknown> {
  const { name } = ours(unqualifiedStateMachine(requiredString(body, "stateMachineArn")));
  const limit = pageSize(body);
  const cursor = nextToken(body);
  const page = await ctx.runtime.listStateMachineVersions(name, {
    ...(limit !== undefined ? { limit } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  const stateMachineVersions = page.items.map((v) => ({
    stateMachineVersionArn: stateMachineArn(name, v.version),
    creationDate: epochSeconds(v.publishedAt),
  }));
  return page.nextCursor !== undefined
    ? { stateMachineVersions, nextToken: page.nextCursor }
    : { stateMachineVersions };
}

async function deleteVersion(body: Body, ctx: AwsContext): Promise<unknown> {
  const arn = requiredString(body, "stateMachineVersionArn", { max: 256 });
  const ref = parseStateMachineArn(arn, "stateMachineVersionArn");
  if (ref.version === undefined) {
    throw invalidField("stateMachineVersionArn", "Member must be a state machine version ARN");
  }
  if (!ref.ours) return {};
  try {
    await ctx.runtime.deleteStateMachineVersion(ref.name, ref.version);
  } catch (err) {
    // Deleting a version that is not there succeeds, as on AWS.
    const gone =
      err instanceof RuntimeError &&
      (err.code === "StateMachineVersionDoesNotExist" || err.code === "StateMachineDoesNotExist");
    if (!gone) throw err;
  }
  return {};
}

/** `routingConfiguration`: version ARNs of one machine with weights → the machine and routes. */
function routing(body: Body, machine?: string): { machine: string; routes: AliasRoute[] } {
  const value = body.routingConfiguration;
  if (!Array.isArray(value) || value.length < 1 || value.length > 2) {
    throw invalidField("routingConfiguration", "Member must have length between 1 and 2");
  }
  let owner = machine;
  const routes = value.map((entry: unknown, i) => {
    const field = `routingConfiguration.${i + 1}`;
    if (typeof entry !== "object" || entry === null)
      throw invalidField(field, "Member must be a RoutingConfigurationListItem");
    const item = entry as Body;
    const ref = ours(
      parseStateMachineArn(
        requiredString(item, "stateMachineVersionArn"),
        `${field}.stateMachineVersionArn`,
      ),
    );
    if (ref.version === undefined) {
      throw invalidField(`${field}.stateMachineVersionArn`, "Member must be a version ARN");
    }
    if (owner !== undefined && owner !== ref.name) {
      throw awsError(
        "ValidationException",
        "Every version an alias routes to must belong to the alias's state machine",
        "INVALID_ROUTING_CONFIGURATION",
      );
    }
    owner = ref.name;
    const weight = item.weight;
    if (typeof weight !== "number" || !Number.isInteger(weight) || weight < 0 || weight > 100) {
      throw invalidField(`${field}.weight`, "Member must be an integer from 0 to 100");
    }
    return { version: ref.version, weight };
  });
  return { machine: owner!, routes };
}

function aliasRef(body: Body): { name: string; alias: string } {
  const ref = ours(
    parseStateMachineArn(requiredString(body, "stateMachineAliasArn"), "stateMachineAliasArn"),
  );
  if (ref.alias === undefined) {
    throw invalidField("stateMachineAliasArn", "Member must be a state machine alias ARN");
  }
  return { name: ref.name, alias: ref.alias };
}

function routingConfiguration(alias: StateMachineAlias) {
  return alias.routing.map((r) => ({
    stateMachineVersionArn: stateMachineArn(alias.stateMachine, r.version),
    weight: r.weight,
  }));
}

async function createAlias(body: Body, ctx: AwsContext): Promise<unknown> {
  const name = requiredString(body, "name", { max: 80 });
  if (!isValidAliasName(name)) {
    throw awsError("InvalidName", `Invalid Name: '${name}' (an alias name is not all digits)`);
  }
  const description = optionalString(body, "description", { max: 256 });
  const { machine, routes } = routing(body);
  let alias;
  try {
    alias = await ctx.runtime.createStateMachineAlias(machine, name, {
      routing: routes,
      ...(description !== undefined ? { description } : {}),
    });
  } catch (err) {
    // AWS: an alias that routes to a version that does not exist is ResourceNotFound.
    if (err instanceof RuntimeError && err.code === "StateMachineVersionDoesNotExist") {
      throw awsError("ResourceNotFound", err.message);
    }
    throw err;
  }
  return {
    stateMachineAliasArn: stateMachineArn(machine, name),
    creationDate: epochSeconds(alias.createdAt),
  };
}

async function describeAlias(body: Body, ctx: AwsContext): Promise<unknown> {
  const { name, alias } = aliasRef(body);
  const found = await ctx.runtime.getStateMachineAlias(name, alias);
  const out: Record<string, unknown> = {
    stateMachineAliasArn: stateMachineArn(name, alias),
    name: alias,
    routingConfiguration: routingConfiguration(found),
    creationDate: epochSeconds(found.createdAt),
    updateDate: epochSeconds(found.updatedAt),
  };
  if (found.description !== undefined) out.description = found.description;
  return out;
}

async function updateAlias(body: Body, ctx: AwsContext): Promise<unknown> {
  const { name, alias } = aliasRef(body);
  const description = optionalString(body, "description", { max: 256 });
  const routes = body.routingConfiguration === undefined ? undefined : routing(body, name).routes;
  if (description === undefined && routes === undefined) {
    throw awsError(
      "ValidationException",
      "Give a description or a routingConfiguration to update",
      "MISSING_REQUIRED_PARAMETER",
    );
  }
  const updated = await ctx.runtime.updateStateMachineAlias(name, alias, {
    ...(description !== undefined ? { description } : {}),
    ...(routes !== undefined ? { routing: routes } : {}),
  });
  return { updateDate: epochSeconds(updated.updatedAt) };
}

async function deleteAlias(body: Body, ctx: AwsContext): Promise<unknown> {
  const { name, alias } = aliasRef(body);
  await ctx.runtime.deleteStateMachineAlias(name, alias);
  return {};
}

async function listAliases(body: Body, ctx: AwsContext): Promise<unknown> {
  const { name } = ours(unqualifiedStateMachine(requiredString(body, "stateMachineArn")));
  const limit = pageSize(body);
  const cursor = nextToken(body);
  const page = await ctx.runtime.listStateMachineAliases(name, {
    ...(limit !== undefined ? { limit } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  const stateMachineAliases = page.items.map((a) => ({
    stateMachineAliasArn: stateMachineArn(name, a.name),
    creationDate: epochSeconds(a.createdAt),
  }));
  return page.nextCursor !== undefined
    ? { stateMachineAliases, nextToken: page.nextCursor }
    : { stateMachineAliases };
}

export const versionActions: ActionTable = {
  PublishStateMachineVersion: { permission: "definitions:write", run: publish },
  ListStateMachineVersions: { permission: "definitions:read", run: listVersions },
  DeleteStateMachineVersion: { permission: "definitions:write", run: deleteVersion },
  CreateStateMachineAlias: { permission: "definitions:write", run: createAlias },
  DescribeStateMachineAlias: { permission: "definitions:read", run: describeAlias },
  UpdateStateMachineAlias: { permission: "definitions:write", run: updateAlias },
  DeleteStateMachineAlias: { permission: "definitions:write", run: deleteAlias },
  ListStateMachineAliases: { permission: "definitions:read", run: listAliases },
};
